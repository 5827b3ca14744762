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
constexpr llvm::StringLiteral kObjectFile = "kernel.bin";
constexpr int kFormatVersion = 1;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string sha256(llvm::StringRef data) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(data)),
                     /*LowerCase=*/true);
}

std::string stageFile(llvm::StringRef stage) { return ("stage-" + stage + ".txt").str(); }

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
  std::optional<std::string> metadataText =
      readFile(entryDir + "/" + kMetadataFile);
  if (!metadataText)
    return std::nullopt;
  auto damaged = [&]() -> llvm::Expected<std::optional<CacheEntry>> {
    // Removed so that the rebuilt kernel can take its place.
    (void)fs::remove_directories(entryDir);
    return std::nullopt;
  };
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*metadataText);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return damaged();
  }
  const llvm::json::Object *meta = parsed->getAsObject();
  if (!meta || meta->getInteger("version") != kFormatVersion ||
      meta->getString("key") != key)
    return damaged();
  const llvm::json::Object *files = meta->getObject("files");
  auto name = meta->getString("name"), entryName = meta->getString("entry");
  const llvm::json::Array *signature = meta->getArray("signature");
  const llvm::json::Array *stages = meta->getArray("stages");
  if (!files || !name || !entryName || !signature || !stages)
    return damaged();

  // Every file must be there with the recorded size and checksum.
  auto readChecked = [&](llvm::StringRef file) -> std::optional<std::string> {
    const llvm::json::Object *info = files->getObject(file);
    if (!info)
      return std::nullopt;
    std::optional<std::string> data = readFile(entryDir + "/" + file);
    if (!data || info->getInteger("bytes") != int64_t(data->size()) ||
        info->getString("sha256") != sha256(*data))
      return std::nullopt;
    return data;
  };
  CacheEntry entry;
  entry.name = name->str();
  entry.entryName = entryName->str();
  for (const llvm::json::Value &v : *signature) {
    if (!v.getAsString())
      return damaged();
    entry.signature.push_back(v.getAsString()->str());
  }
  std::optional<std::string> object = readChecked(kObjectFile);
  if (!object)
    return damaged();
  entry.object = std::move(*object);
  for (const llvm::json::Value &v : *stages) {
    if (!v.getAsString())
      return damaged();
    std::string stage = v.getAsString()->str();
    std::optional<std::string> text = readChecked(stageFile(stage));
    if (!text)
      return damaged();
    entry.stages.push_back({stage, std::move(*text)});
  }
  // Recently used: eviction goes by the metadata's modification time.
  std::string metadataPath = entryDir + "/" + kMetadataFile.str();
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

  llvm::json::Object files;
  auto add = [&](llvm::StringRef file, llvm::StringRef data) -> llvm::Error {
    if (llvm::Error err = writeFile(tmpDir + "/" + file, data))
      return err;
    // An ObjectKey made from a StringRef borrows it: give it its own copy.
    files[file.str()] = llvm::json::Object{{"bytes", int64_t(data.size())},
                                           {"sha256", sha256(data)}};
    return llvm::Error::success();
  };
  if (llvm::Error err = add(kObjectFile, entry.object))
    return err;
  llvm::json::Array stages;
  for (const auto &[stage, text] : entry.stages) {
    if (llvm::Error err = add(stageFile(stage), text))
      return err;
    stages.push_back(stage);
  }
  llvm::json::Array signature;
  for (const std::string &s : entry.signature)
    signature.push_back(s);
  llvm::json::Object meta{
      {"version", kFormatVersion},
      {"key", key.str()},
      {"name", entry.name},
      {"entry", entry.entryName},
      {"signature", std::move(signature)},
      {"stages", std::move(stages)},
      {"files", std::move(files)},
  };
  std::string metadataText;
  llvm::raw_string_ostream os(metadataText);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(meta)));
  os.flush();
  if (llvm::Error err = writeFile(tmpDir + "/" + kMetadataFile, metadataText))
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
