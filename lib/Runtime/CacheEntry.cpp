//===- CacheEntry.cpp - A compiled kernel as cache files ------------------===//
#include "tessel/Runtime/CacheEntry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace tessel::runtime;

namespace {

constexpr int kFormatVersion = 4;
constexpr llvm::StringLiteral kObjectFile = "kernel.bin";
constexpr llvm::StringLiteral kBlobMagic = "tessel-cache-entry\n";

std::string sha256(llvm::StringRef data) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(data)),
                     /*LowerCase=*/true);
}

std::string stageFile(llvm::StringRef stage) {
  return ("stage-" + stage + ".txt").str();
}

} // namespace

std::vector<std::pair<std::string, llvm::StringRef>>
tessel::runtime::entryFiles(const CacheEntry &entry) {
  std::vector<std::pair<std::string, llvm::StringRef>> files;
  files.push_back({kObjectFile.str(), entry.object});
  for (const auto &[stage, text] : entry.stages)
    files.push_back({stageFile(stage), text});
  return files;
}

std::string tessel::runtime::entryMetadata(llvm::StringRef key,
                                           const CacheEntry &entry) {
  llvm::json::Object files;
  for (const auto &[file, data] : entryFiles(entry))
    files[file] = llvm::json::Object{{"bytes", int64_t(data.size())},
                                     {"sha256", sha256(data)}};
  llvm::json::Array stages, signature;
  for (const auto &stage : entry.stages)
    stages.push_back(stage.first);
  for (const std::string &s : entry.signature)
    signature.push_back(s);
  llvm::json::Array writes;
  for (unsigned i : entry.writes)
    writes.push_back(int64_t(i));
  llvm::json::Array checks;
  for (const LaunchCheck &c : entry.checks)
    checks.push_back(
        llvm::json::Object{{"argument", int64_t(c.argument)},
                           {"scale", std::to_string(c.scale)},
                           {"offset", std::to_string(c.offset)},
                           {"multiple", std::to_string(c.multiple)},
                           {"message", c.message}});
  llvm::json::Object meta{
      {"version", kFormatVersion},  {"key", key.str()},
      {"name", entry.name},         {"entry", entry.entryName},
      {"target", entry.target},     {"options", entry.options},
      {"signature", std::move(signature)}, {"writes", std::move(writes)},
      {"checks", std::move(checks)},
      {"stages", std::move(stages)},
      {"files", std::move(files)},
  };
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(meta))).str();
}

std::optional<CacheEntry> tessel::runtime::entryFromFiles(
    llvm::StringRef key, llvm::StringRef metadata,
    llvm::function_ref<std::optional<std::string>(llvm::StringRef)> readFile) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(metadata);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *meta = parsed->getAsObject();
  if (!meta || meta->getInteger("version") != kFormatVersion ||
      meta->getString("key") != key)
    return std::nullopt;
  const llvm::json::Object *files = meta->getObject("files");
  auto name = meta->getString("name"), entryName = meta->getString("entry");
  auto target = meta->getString("target"), options = meta->getString("options");
  const llvm::json::Array *signature = meta->getArray("signature");
  const llvm::json::Array *stages = meta->getArray("stages");
  const llvm::json::Array *writes = meta->getArray("writes");
  const llvm::json::Array *checks = meta->getArray("checks");
  if (!files || !name || !entryName || !target || !options || !signature ||
      !stages || !writes || !checks)
    return std::nullopt;
  // Every file must be there with the recorded size and checksum.
  auto readChecked = [&](llvm::StringRef file) -> std::optional<std::string> {
    const llvm::json::Object *info = files->getObject(file);
    if (!info)
      return std::nullopt;
    std::optional<std::string> data = readFile(file);
    if (!data || info->getInteger("bytes") != int64_t(data->size()) ||
        info->getString("sha256") != sha256(*data))
      return std::nullopt;
    return data;
  };
  CacheEntry entry;
  entry.name = name->str();
  entry.entryName = entryName->str();
  entry.target = target->str();
  entry.options = options->str();
  for (const llvm::json::Value &v : *signature) {
    if (!v.getAsString())
      return std::nullopt;
    entry.signature.push_back(v.getAsString()->str());
  }
  for (const llvm::json::Value &v : *writes) {
    std::optional<int64_t> i = v.getAsInteger();
    if (!i || *i < 0 || size_t(*i) >= entry.signature.size())
      return std::nullopt;
    entry.writes.push_back(unsigned(*i));
  }
  for (const llvm::json::Value &v : *checks) {
    const llvm::json::Object *c = v.getAsObject();
    if (!c)
      return std::nullopt;
    std::optional<int64_t> argument = c->getInteger("argument");
    auto number = [&](llvm::StringRef field) -> std::optional<uint64_t> {
      std::optional<llvm::StringRef> text = c->getString(field);
      uint64_t value;
      if (!text || text->getAsInteger(10, value))
        return std::nullopt;
      return value;
    };
    std::optional<uint64_t> scale = number("scale"), offset = number("offset"),
                            multiple = number("multiple");
    std::optional<llvm::StringRef> message = c->getString("message");
    if (!argument || *argument < 0 ||
        size_t(*argument) >= entry.signature.size() || !scale || !offset ||
        !multiple || !llvm::isPowerOf2_64(*multiple) || !message)
      return std::nullopt;
    entry.checks.push_back(
        {unsigned(*argument), *scale, *offset, *multiple, message->str()});
  }
  std::optional<std::string> object = readChecked(kObjectFile);
  if (!object)
    return std::nullopt;
  entry.object = std::move(*object);
  for (const llvm::json::Value &v : *stages) {
    if (!v.getAsString())
      return std::nullopt;
    std::string stage = v.getAsString()->str();
    std::optional<std::string> text = readChecked(stageFile(stage));
    if (!text)
      return std::nullopt;
    entry.stages.push_back({stage, std::move(*text)});
  }
  return entry;
}

// Blob: magic, then length-prefixed records: the metadata, then for each file
// its name and contents ("<bytes>\n<data>").
std::string tessel::runtime::packEntry(llvm::StringRef key,
                                       const CacheEntry &entry) {
  std::string blob;
  llvm::raw_string_ostream os(blob);
  auto record = [&](llvm::StringRef data) { os << data.size() << "\n" << data; };
  os << kBlobMagic;
  record(entryMetadata(key, entry));
  for (const auto &[file, data] : entryFiles(entry)) {
    record(file);
    record(data);
  }
  return blob;
}

std::optional<CacheEntry> tessel::runtime::unpackEntry(llvm::StringRef key,
                                                       llvm::StringRef blob) {
  if (!blob.consume_front(kBlobMagic))
    return std::nullopt;
  auto record = [&]() -> std::optional<llvm::StringRef> {
    auto [length, rest] = blob.split('\n');
    size_t n;
    if (length.getAsInteger(10, n) || rest.size() < n)
      return std::nullopt;
    blob = rest.drop_front(n);
    return rest.take_front(n);
  };
  std::optional<llvm::StringRef> metadata = record();
  if (!metadata)
    return std::nullopt;
  std::map<std::string, std::string, std::less<>> files;
  while (!blob.empty()) {
    std::optional<llvm::StringRef> file = record(), data = record();
    if (!file || !data)
      return std::nullopt;
    files[file->str()] = data->str();
  }
  return entryFromFiles(key, *metadata,
                        [&](llvm::StringRef file) -> std::optional<std::string> {
                          auto it = files.find(file);
                          if (it == files.end())
                            return std::nullopt;
                          return it->second;
                        });
}
