//===- Target.cpp - Target names, options and the registry ----------------===//
#include "tessel/Target/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

#include <mutex>

using namespace tessel::target;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Every backend tessel knows of, with the form of its architecture names.
struct KnownBackend {
  const char *name;
  const char *archPattern; ///< empty: the arch may be omitted
  const char *example;
};
constexpr KnownBackend kKnownBackends[] = {
    {"cpu", "^[a-z0-9_.-]*$", "cpu, cpu:x86-64-v3"},
    {"cuda", "^[0-9]+a?$", "cuda:80, cuda:90a"},
    {"hip", "^gfx[0-9a-f]+$", "hip:gfx942"},
    {"sim", "^(sm_[0-9]+a?|gfx[0-9a-f]+)$", "sim:sm_80, sim:sm_90a, sim:gfx942"},
};

std::string knownForms() {
  std::string forms;
  for (const KnownBackend &b : kKnownBackends)
    forms += (forms.empty() ? "" : ", ") + std::string(b.example);
  return forms;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, TargetFactory> factories;
  std::map<std::string, std::unique_ptr<Target>> targets;
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

llvm::Expected<TargetSpec> TargetSpec::parse(llvm::StringRef text) {
  auto [backend, arch] = text.trim().split(':');
  const KnownBackend *known = llvm::find_if(
      kKnownBackends, [&](const KnownBackend &b) { return backend == b.name; });
  if (known == std::end(kKnownBackends))
    return error("unknown target '" + text + "' (targets: " + knownForms() +
                 ")");
  bool archOptional = backend == "cpu";
  if ((arch.empty() && !archOptional) ||
      (!arch.empty() && !llvm::Regex(known->archPattern).match(arch)))
    return error("target '" + text + "': expected " + known->example);
  return TargetSpec{backend.str(), arch.str()};
}

llvm::Error CompileOptions::set(llvm::StringRef name, llvm::StringRef value) {
  auto integer = [&](int &out, int min) -> llvm::Error {
    if (value.getAsInteger(10, out) || out < min)
      return error("compile option " + name + "=" + value +
                   ": expected an integer >= " + llvm::Twine(min));
    return llvm::Error::success();
  };
  auto boolean = [&](bool &out) -> llvm::Error {
    if (value == "1" || value == "true" || value == "True")
      out = true;
    else if (value == "0" || value == "false" || value == "False")
      out = false;
    else
      return error("compile option " + name + "=" + value +
                   ": expected true or false");
    return llvm::Error::success();
  };
  if (name == "num_warps") {
    if (auto err = integer(numWarps, 1))
      return err;
    if (!llvm::isPowerOf2_32(numWarps))
      return error("num_warps=" + value + ": must be a power of 2");
    return llvm::Error::success();
  }
  if (name == "num_stages") {
    numStagesSet = true;
    return integer(numStages, 0);
  }
  if (name == "num_ctas")
    return integer(numCtas, 1);
  if (name == "maxnreg")
    return integer(maxnreg, 0);
  if (name == "debug")
    return boolean(debug);
  if (name == "enable_fp_fusion")
    return boolean(enableFpFusion);
  extra[name.str()] = value.str();
  return llvm::Error::success();
}

std::string CompileOptions::str() const {
  std::string s = "num_warps=" + std::to_string(numWarps) +
                  ",num_stages=" + std::to_string(numStages) +
                  ",num_ctas=" + std::to_string(numCtas) +
                  ",maxnreg=" + std::to_string(maxnreg) +
                  ",debug=" + (debug ? "true" : "false") +
                  ",enable_fp_fusion=" + (enableFpFusion ? "true" : "false");
  for (const auto &[name, value] : extra)
    s += "," + name + "=" + value;
  return s;
}

LoadedKernel::~LoadedKernel() = default;

static std::string describeAssertion(const DeviceAssertError::Info &info) {
  if (info.file.empty()) // where is unknown (the CUDA driver's error alone)
    return "kernel " + info.kernel + ": " + info.message;
  std::string text = info.file + ":" + std::to_string(info.line) + ": " +
                     (info.function.empty() ? info.kernel : info.function) +
                     ":";
  if (info.pid[0] >= 0)
    text += " pid (" + std::to_string(info.pid[0]) + ", " +
            std::to_string(info.pid[1]) + ", " + std::to_string(info.pid[2]) +
            ")";
  if (info.indexKnown) {
    text += " idx (";
    for (size_t i = 0; i < info.index.size(); ++i)
      text += (i ? ", " : "") + std::to_string(info.index[i]);
    text += ")";
  }
  if (!info.thread.empty())
    text += " " + info.thread;
  return text + ": Assertion `" + info.message +
         "` failed (device-side assertion)";
}

DeviceAssertError::DeviceAssertError(Info info)
    : std::runtime_error(describeAssertion(info)), details(std::move(info)) {}
Target::~Target() = default;

void tessel::target::registerBackend(llvm::StringRef backend,
                                     TargetFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[backend.str()] = std::move(factory);
}

std::vector<std::string> tessel::target::availableBackends() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto &entry : r.factories) {
    std::string name = llvm::StringRef(entry.first).split(':').first.str();
    if (names.empty() || names.back() != name)
      names.push_back(name);
  }
  return names;
}

llvm::Expected<const Target *> tessel::target::getTarget(llvm::StringRef text) {
  llvm::Expected<TargetSpec> spec = TargetSpec::parse(text);
  if (!spec)
    return spec.takeError();
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string name = spec->str();
  if (auto it = r.targets.find(name); it != r.targets.end())
    return it->second.get();
  // A backend whose architectures belong to several vendors (sim) has a
  // factory per family of architecture names ("sim:sm", "sim:gfx").
  std::string family = spec->backend + ":" +
                       llvm::StringRef(spec->arch)
                           .take_while([](char c) { return llvm::isAlpha(c); })
                           .str();
  auto factory = r.factories.find(family);
  if (factory == r.factories.end())
    factory = r.factories.find(spec->backend);
  if (factory == r.factories.end())
    return error("target '" + name + "': the " + spec->backend +
                 " backend is not available in this build of tessel");
  llvm::Expected<std::unique_ptr<Target>> target = factory->second(*spec);
  if (!target)
    return target.takeError();
  return (r.targets[name] = std::move(*target)).get();
}
