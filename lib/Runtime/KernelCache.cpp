//===- KernelCache.cpp - The on-disk cache of compiled kernels ------------===//
#include "tessel/Runtime/KernelCache.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessel::runtime;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

constexpr llvm::StringLiteral kMetadataFile = "metadata.json";

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error writeFile(const llvm::Twine &filePath, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(filePath.str(), ec, fs::OF_None);
  if (ec)
    return fail("cannot write " + filePath + ": " + ec.message());
  os << data;
  os.close();
  if (os.has_error())
    return fail("cannot write " + filePath + ": " + os.error().message());
  return llvm::Error::success();
}

std::optional<std::string> readFile(const llvm::Twine &filePath) {
  auto buffer = llvm::MemoryBuffer::getFile(filePath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

bool isKey(llvm::StringRef name) {
  return name.size() == 64 && llvm::all_of(name, llvm::isHexDigit);
}

} // namespace

std::string tessel::runtime::hashKey(llvm::ArrayRef<std::string> parts) {
  llvm::SHA256 hasher;
  for (const std::string &part : parts) {
    std::string length = std::to_string(part.size()) + ":";
    hasher.update(length);
    hasher.update(part);
  }
  return llvm::toHex(hasher.final(), /*LowerCase=*/true);
}

KernelCache::KernelCache(std::string directory) : dir(std::move(directory)) {}

std::string KernelCache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> p(dir);
  path::append(p, key);
  return std::string(p.str());
}

llvm::Error KernelCache::checkDirectory() const {
  if (!fs::is_directory(dir)) {
    if (std::error_code ec = fs::create_directories(dir, /*IgnoreExisting=*/true,
                                                    fs::perms::owner_all))
      return fail("cannot create the kernel cache directory " + dir + ": " +
                  ec.message());
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return fail("cannot read the kernel cache directory " + dir);
  bool othersWrite = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (othersWrite || st.st_uid != ::getuid()) {
    char mode[8];
    snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return fail("refusing to use the kernel cache directory " + dir +
                ": it is " +
                (othersWrite ? llvm::Twine("writable by other users (mode ") +
                                   mode + ")"
                             : llvm::Twine("owned by another user")) +
                ", and a cache holds code that runs in this process. Make it "
                "private (chmod 700) or point TESSEL_CACHE_DIR elsewhere.");
  }
  return llvm::Error::success();
}

llvm::Expected<std::optional<CacheEntry>>
KernelCache::load(llvm::StringRef key) const {
  std::string entryDir = entryPath(key);
  std::string metadataPath = entryDir + "/" + kMetadataFile.str();
  std::optional<std::string> metadataText = readFile(metadataPath);
  if (!metadataText)
    return std::nullopt;
  std::optional<CacheEntry> entry = entryFromFiles(
      key, *metadataText,
      [&](llvm::StringRef file) { return readFile(entryDir + "/" + file); });
  if (!entry) {
    // Damaged: removed so that the rebuilt kernel can take its place.
    (void)fs::remove_directories(entryDir);
    return std::nullopt;
  }
  // Recently used: eviction goes by the metadata's modification time.
  (void)::utimensat(AT_FDCWD, metadataPath.c_str(), nullptr, 0);
  return entry;
}

llvm::Error KernelCache::store(llvm::StringRef key,
                               const CacheEntry &entry) const {
  if (!isKey(key))
    return fail("invalid kernel cache key '" + key + "'");
  if (llvm::Error err = checkDirectory())
    return err;
  static std::atomic<uint64_t> counter{0};
  std::string tmpDir = dir + "/.tmp-" + key.str() + "-" +
                       std::to_string(llvm::sys::Process::getProcessId()) +
                       "-" + std::to_string(counter++);
  if (std::error_code ec = fs::create_directory(tmpDir, /*IgnoreExisting=*/false,
                                                fs::perms::owner_all))
    return fail("cannot create " + tmpDir + ": " + ec.message());
  llvm::scope_exit cleanup([&] { (void)fs::remove_directories(tmpDir); });

  for (const auto &[file, data] : entryFiles(entry))
    if (llvm::Error err = writeFile(tmpDir + "/" + file, data))
      return err;
  if (llvm::Error err =
          writeFile(tmpDir + "/" + kMetadataFile, entryMetadata(key, entry)))
    return err;

  // Publish: renaming a directory is atomic. If another process published
  // this key first, keep its entry.
  if (std::error_code ec = fs::rename(tmpDir, entryPath(key))) {
    if (fs::exists(entryPath(key) + "/" + kMetadataFile.str()))
      return llvm::Error::success();
    return fail("cannot add " + key + " to the kernel cache: " + ec.message());
  }
  return llvm::Error::success();
}

std::vector<CacheEntryInfo> KernelCache::entries() const {
  std::vector<CacheEntryInfo> result;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef key = path::filename(it->path());
    if (!isKey(key))
      continue;
    CacheEntryInfo info;
    info.key = key.str();
    std::error_code fileEc;
    for (fs::directory_iterator f(it->path(), fileEc), fend; !fileEc && f != fend;
         f.increment(fileEc)) {
      fs::file_status status;
      if (!fs::status(f->path(), status))
        info.bytes += status.getSize();
    }
    fs::file_status metaStatus;
    if (!fs::status(it->path() + "/" + kMetadataFile.str(), metaStatus))
      info.lastUse = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         metaStatus.getLastModificationTime().time_since_epoch())
                         .count();
    if (auto text = readFile(it->path() + "/" + kMetadataFile.str())) {
      if (auto parsed = llvm::json::parse(*text)) {
        if (auto *obj = parsed->getAsObject())
          if (auto name = obj->getString("name"))
            info.name = name->str();
      } else {
        llvm::consumeError(parsed.takeError());
      }
    }
    result.push_back(std::move(info));
  }
  return result;
}

llvm::Error KernelCache::evictToSize(uint64_t maxBytes) const {
  std::vector<CacheEntryInfo> all = entries();
  uint64_t total = 0;
  for (const CacheEntryInfo &e : all)
    total += e.bytes;
  std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
    return a.lastUse < b.lastUse;
  });
  for (const CacheEntryInfo &e : all) {
    if (total <= maxBytes)
      break;
    if (std::error_code ec = fs::remove_directories(entryPath(e.key)))
      return fail("cannot evict " + e.key + ": " + ec.message());
    total -= e.bytes;
  }
  return llvm::Error::success();
}

llvm::Error KernelCache::clear() const {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = path::filename(it->path());
    if (isKey(name) || name.starts_with(".tmp-"))
      if (std::error_code rmEc = fs::remove_directories(it->path()))
        return fail("cannot remove " + it->path() + ": " + rmEc.message());
  }
  return llvm::Error::success();
}
