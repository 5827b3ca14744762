//===- BuildId.cpp - Identifies this build of the compiler ----------------===//
//
// Kernel cache keys include the compiler's build id, so that a rebuilt
// compiler never loads kernels another build compiled. The linker's GNU
// build id note is a hash of the binary: read it from the loaded image
// (cheap: no file I/O on the launch path).
//
//===----------------------------------------------------------------------===//
#include "tessel/Runtime/KernelCache.h"

#include "llvm/ADT/StringExtras.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

namespace {

struct Search {
  const void *address;
  std::string id;
};

int findBuildId(struct dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<Search *>(data);
  auto addr = reinterpret_cast<uintptr_t>(search->address);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && addr >= start && addr < start + ph.p_memsz)
      contains = true;
  }
  if (!contains)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    auto *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
      const char *name = p + sizeof(ElfW(Nhdr));
      const char *desc = name + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        search->id = llvm::toHex(
            llvm::StringRef(desc, note->n_descsz), /*LowerCase=*/true);
        return 1;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

} // namespace

std::string tessel::runtime::compilerBuildId() {
  static const std::string id = [] {
    Search search{reinterpret_cast<const void *>(&compilerBuildId), {}};
    dl_iterate_phdr(findBuildId, &search);
    if (!search.id.empty())
      return "gnu-build-id:" + search.id;
    // No note: the binary's path, size and modification time.
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<const void *>(&compilerBuildId), &info) &&
        info.dli_fname && ::stat(info.dli_fname, &st) == 0)
      return std::string("file:") + info.dli_fname + ":" +
             std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
    return std::string("unknown");
  }();
  return id;
}
