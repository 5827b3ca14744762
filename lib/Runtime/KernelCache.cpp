//===- KernelCache.cpp - The on-disk cache of compiled kernels ------------===//
#include "tessel/Runtime/KernelCache.h"
#include "tessel/Support/WriteFile.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
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

// Temporary names: new entries being written and entries being removed. No
// key looks like one, so a temporary directory is never loaded.
constexpr llvm::StringLiteral kTempPrefix = ".tmp-";

std::string tempPath(llvm::StringRef dir, llvm::StringRef what) {
  static std::atomic<uint64_t> counter{0};
  return (dir + "/" + kTempPrefix + what + "-" +
          llvm::Twine(llvm::sys::Process::getProcessId()) + "-" +
          llvm::Twine(counter++))
      .str();
}

// Removes an entry (or whatever else sits at its path) in a way a crash cannot
// leave half done: first renamed away (atomic; the key is free from then on),
// then deleted. A crash while deleting leaves only a temporary directory.
std::error_code discard(llvm::StringRef dir, const std::string &entryPath) {
  std::string away = tempPath(dir, "removed");
  if (std::error_code ec = fs::rename(entryPath, away))
    return ec == std::errc::no_such_file_or_directory ? std::error_code() : ec;
  if (fs::is_directory(away))
    return fs::remove_directories(away);
  return fs::remove(away);
}

// Temporary directories older than this were left by a process that died
// (writing an entry takes well under a second).
constexpr std::chrono::hours kStaleTempAge{1};

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
  if (!fs::exists(dir)) {
    if (std::error_code ec = fs::create_directories(dir, /*IgnoreExisting=*/true,
                                                    fs::perms::owner_all))
      return fail("cannot create the kernel cache directory " + dir + ": " +
                  ec.message());
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return fail("cannot read the kernel cache directory " + dir + ": " +
                std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return fail("the kernel cache directory " + dir +
                " is not a directory; point TESSEL_CACHE_DIR elsewhere");
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
  if (!fs::exists(entryDir))
    return std::nullopt;
  std::string metadataPath = entryDir + "/" + kMetadataFile.str();
  std::optional<CacheEntry> entry;
  if (std::optional<std::string> metadataText = readFile(metadataPath))
    entry = entryFromFiles(key, *metadataText, [&](llvm::StringRef file) {
      return readFile(entryDir + "/" + file);
    });
  if (!entry) {
    // Damaged (entries are published whole, so this includes one without its
    // metadata, or not a directory at all): removed so that the rebuilt
    // kernel can take its place.
    if (std::error_code ec = discard(dir, entryDir))
      return fail("cannot remove the damaged kernel cache entry " + entryDir +
                  ": " + ec.message());
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
  std::string tmpDir = tempPath(dir, key);
  if (std::error_code ec = fs::create_directory(tmpDir, /*IgnoreExisting=*/false,
                                                fs::perms::owner_all))
    return fail("cannot create " + tmpDir + ": " + ec.message());
  llvm::scope_exit cleanup([&] { (void)fs::remove_directories(tmpDir); });

  for (const auto &[file, data] : entryFiles(entry))
    if (llvm::Error err = tessel::writeNewFile(tmpDir + "/" + file, data))
      return err;
  if (llvm::Error err =
          tessel::writeNewFile(tmpDir + "/" + kMetadataFile.str(), entryMetadata(key, entry)))
    return err;

  // Publish: renaming a directory is atomic. If another process published
  // this key first, keep its entry; anything else in the way is the remains
  // of a damaged entry, replaced.
  std::string target = entryPath(key);
  for (int attempt = 0;; ++attempt) {
    std::error_code ec = fs::rename(tmpDir, target);
    if (!ec)
      return llvm::Error::success();
    if (fs::exists(target + "/" + kMetadataFile.str()))
      return llvm::Error::success();
    if (attempt == 1)
      return fail("cannot add " + key + " to the kernel cache: " + ec.message());
    if (std::error_code discardEc = discard(dir, target))
      return fail("cannot add " + key + " to the kernel cache: " +
                  discardEc.message());
  }
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
    if (std::error_code ec = discard(dir, entryPath(e.key)))
      return fail("cannot evict " + e.key + ": " + ec.message());
    total -= e.bytes;
  }
  // What processes that died while writing or removing an entry left.
  auto staleBefore = std::chrono::system_clock::now() - kStaleTempAge;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    fs::file_status status;
    if (path::filename(it->path()).starts_with(kTempPrefix) &&
        !fs::status(it->path(), status) &&
        status.getLastModificationTime() < staleBefore)
      (void)fs::remove_directories(it->path());
  }
  return llvm::Error::success();
}

llvm::Error KernelCache::clear() const {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = path::filename(it->path());
    std::error_code rmEc;
    if (isKey(name))
      rmEc = discard(dir, it->path());
    else if (name.starts_with(kTempPrefix))
      rmEc = fs::remove_directories(it->path());
    if (rmEc)
      return fail("cannot remove " + it->path() + ": " + rmEc.message());
  }
  return llvm::Error::success();
}
