//===- Hostcall.cpp - Packets, messages and the interrupt -----------------===//
//
// The layout the device library's hostcall expects (OCKL hostcall_impl.cl):
//
//   buffer   u64 headers, u64 payloads, u64 doorbell (an HSA signal),
//            u64 free_stack, u64 ready_stack, u64 index_mask
//   header   u64 next, u64 activemask, u32 service, u32 control (bit 0:
//            ready), 24 bytes per packet
//   payload  64 lanes x 8 u64, 4096 bytes per packet
//
// Stack entries are tagged packet pointers: the low bits (index_mask) the
// packet's index, the rest a tag the device bumps each time it frees one,
// so that no entry is ever 0 (the empty stack). A wave pops a packet from
// the free stack, writes the service, its exec mask and each active lane's
// eight arguments, sets the ready flag, pushes the packet on the ready stack
// and adds 1 to the doorbell signal (amd_signal_t: kind, value, event
// mailbox pointer, event id), which, having a mailbox, makes it store the
// event id there and send the interrupt. It then spins until the host
// clears the ready flag and reads the two words the host left at the start
// of each lane's slot.
//
// The only service is printf (2). Its lanes send messages (OCKL
// services.cl, ROCclr devhcmessages.cpp): the first argument is a
// descriptor (bit 0 begin, bit 1 end, bits 2-4 zero, bits 5-7 how many of
// the other seven arguments carry data, bits 8-63 the message id), the
// data words are appended to the message; at a begin the host makes a new
// message and returns the descriptor with its id, at the end it prints the
// whole message and returns printf's result.
//
//===----------------------------------------------------------------------===//
#include "Hostcall.h"

#include "Wave.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tessel::gpusim::amdgcn {
namespace {

constexpr uint32_t kHeaderBytes = 24;
constexpr uint32_t kPayloadBytes = kLanes * 8 * 8;
constexpr uint32_t kServicePrintf = 2;
constexpr uint32_t kSignalBytes = 64;
/// The doorbell's event id (any value: the interrupt carries its low byte).
constexpr uint32_t kEventId = 1;

uint64_t load64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t load32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void store64(uint8_t *p, uint64_t v) { std::memcpy(p, &v, 8); }

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

} // namespace

Hostcall::Hostcall(GlobalMemory &global, uint32_t waves) : global_(global), packets_(std::max<uint32_t>(waves, 1)) {
  uint32_t indexBits = 0;
  while ((1u << indexBits) < packets_)
    ++indexBits;
  indexMask_ = (uint64_t(1) << indexBits) - 1;
  const uint64_t tag = indexMask_ + 1;
  buffer_ = global.allocate(48, "the hostcall buffer");
  headers_ = global.allocate(uint64_t(packets_) * kHeaderBytes, "the hostcall packet headers");
  payloads_ = global.allocate(uint64_t(packets_) * kPayloadBytes, "the hostcall payloads");
  uint64_t signal = global.allocate(kSignalBytes, "the hostcall doorbell signal");
  uint64_t mailbox = global.allocate(8, "the hostcall event mailbox");
  uint8_t *s = global.allocation(signal).data.data();
  store64(s, 1); // AMD_SIGNAL_KIND_USER
  store64(s + 16, mailbox);
  std::memcpy(s + 24, &kEventId, 4);
  // Every packet free, in index order, each entry with tag 1.
  uint8_t *h = global.allocation(headers_).data.data();
  for (uint32_t i = 0; i + 1 < packets_; ++i)
    store64(h + uint64_t(i) * kHeaderBytes, tag | (i + 1));
  uint8_t *b = global.allocation(buffer_).data.data();
  store64(b, headers_);
  store64(b + 8, payloads_);
  store64(b + 16, signal);
  store64(b + 24, tag);
  store64(b + 32, 0);
  store64(b + 40, indexMask_);
}

void Hostcall::startWorkgroup() { lastPrint_.clear(); }

void Hostcall::interrupt(Wave &w) {
  uint8_t *b = global_.translate(buffer_, 48);
  // Take the whole ready stack; it lists the newest packet first.
  uint64_t top = load64(b + 32);
  store64(b + 32, 0);
  std::vector<uint64_t> ready;
  for (uint64_t p = top; p; p = load64(global_.translate(headers_ + (p & indexMask_) * kHeaderBytes, 8))) {
    uint64_t index = p & indexMask_;
    if (index >= packets_)
      w.fail("hostcall: the ready stack holds packet " + std::to_string(index) + " of a buffer of " +
             std::to_string(packets_) + " (entry " + hex(p) + ")");
    if (ready.size() == packets_)
      w.fail("hostcall: the ready stack lists more packets than the buffer has (a cycle)");
    ready.push_back(index);
  }
  std::vector<size_t> printed;
  for (auto it = ready.rbegin(); it != ready.rend(); ++it) {
    uint8_t *header = global_.translate(headers_ + *it * kHeaderBytes, kHeaderBytes);
    uint64_t active = load64(header + 8);
    uint32_t service = load32(header + 16), control = load32(header + 20);
    if (!(control & 1))
      w.fail("hostcall: packet " + std::to_string(*it) + " is on the ready stack without its ready flag");
    if (service != kServicePrintf)
      w.fail("hostcall: service " + std::to_string(service) + " is not simulated (only printf, 2)");
    uint8_t *payload = global_.translate(payloads_ + *it * kPayloadBytes, kPayloadBytes);
    for (int lane = 0; lane < kLanes; ++lane)
      if ((active >> lane) & 1)
        serveLane(w, payload + lane * 64, lane, printed);
    control &= ~1u;
    std::memcpy(header + 20, &control, 4);
  }
  if (!printed.empty()) {
    if (lastPrint_.size() <= w.id)
      lastPrint_.resize(w.id + 1);
    lastPrint_[w.id] = std::move(printed);
  }
}

void Hostcall::serveLane(Wave &w, uint8_t *slot, int lane, std::vector<size_t> &printed) {
  uint64_t desc = load64(slot);
  bool begin = desc & 1, end = desc & 2;
  if (desc & 0x1c)
    w.fail("hostcall: message descriptor " + hex(desc) + " has its reserved bits 2-4 set", lane);
  uint64_t id = desc >> 8;
  unsigned count = unsigned(desc >> 5) & 7;
  if (begin) {
    id = nextId_++;
    open_[id];
    desc = (desc & 0xff & ~uint64_t(1)) | id << 8;
    store64(slot, desc);
  } else if (!open_.count(id)) {
    w.fail("hostcall: no printf message " + std::to_string(id) + " is open (descriptor " + hex(desc) + ")", lane);
  }
  std::vector<uint64_t> &words = open_[id];
  for (unsigned i = 0; i < count; ++i)
    words.push_back(load64(slot + 8 * (1 + i)));
  if (!end)
    return;
  std::string text;
  try {
    text = formatPrintf(words);
  } catch (const std::runtime_error &e) {
    w.fail(std::string("hostcall printf: ") + e.what(), lane);
  }
  open_.erase(id);
  // printf's result: the number of characters written.
  store64(slot, text.size());
  printed.push_back(lines_.size());
  lines_.push_back({std::move(text), lane});
}

std::vector<Hostcall::Printed> Hostcall::lastPrinted(uint32_t wave) const {
  std::vector<Printed> out;
  if (wave < lastPrint_.size())
    for (size_t i : lastPrint_[wave])
      out.push_back({lines_[i].lane, lines_[i].text});
  return out;
}

void Hostcall::dropReports(bool (*isReport)(const std::string &)) {
  for (const std::vector<size_t> &wave : lastPrint_)
    for (size_t i : wave)
      if (isReport(lines_[i].text))
        lines_[i].dropped = true;
}

std::string Hostcall::output() const {
  std::string text;
  for (const Line &l : lines_)
    if (!l.dropped)
      text += l.text;
  return text;
}

void registerHostcallOps(Table &t) {
  t["s_sendmsg"] = [](Wave &w, const Inst &I) {
    if (I.mods.message != 1)
      w.fail("s_sendmsg: only sendmsg(MSG_INTERRUPT) is simulated");
    if (!w.host)
      w.fail("s_sendmsg: an interrupt from a kernel without a hidden_hostcall_buffer argument (no host listens)");
    w.host->interrupt(w);
  };
}

} // namespace tessel::gpusim::amdgcn
