//===- tessel-gpusim.cpp - Run a PTX kernel in the simulator ---------------===//
//
//   tessel-gpusim kernel.ptx -k NAME -g X[,Y,Z] -w WARPS [-s SHARED_BYTES]
//                 [-j THREADS] [--no-race-check] [-o OUTDIR] ARG...
//
// Each ARG is one kernel parameter, in order:
//   file.npy            an array (written back to OUTDIR/argN.npy after the run)
//   zeros:BYTES         a zero-filled buffer of BYTES bytes
//   i:VALUE / f:VALUE   an integer / a float
//   null                a null pointer
// Prints the counters as JSON on stdout; errors go to stderr (exit code 1).
//
//===----------------------------------------------------------------------===//
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Launch.h"
#include "tessel/GPUSim/Npy.h"
#include "tessel/GPUSim/Program.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace tessel::gpusim;

static void usage() {
  std::cerr << "usage: tessel-gpusim kernel.ptx -k NAME -g X[,Y,Z] -w WARPS "
               "[-s SHARED_BYTES] [-j THREADS] [--no-race-check] [-o OUTDIR] "
               "ARG... (file.npy | zeros:BYTES | i:INT | f:FLOAT | null)\n";
  std::exit(2);
}

int main(int argc, char **argv) {
  std::string ptxPath, kernel, outDir = ".";
  LaunchConfig cfg;
  std::vector<std::string> argSpecs;
  unsigned warps = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage();
      return argv[++i];
    };
    if (a == "-k")
      kernel = value();
    else if (a == "-g") {
      std::stringstream ss(value());
      std::string d;
      int n = 0;
      while (std::getline(ss, d, ',') && n < 3)
        cfg.grid[n++] = uint32_t(std::stoul(d));
    } else if (a == "-w")
      warps = unsigned(std::stoul(value()));
    else if (a == "-s")
      cfg.dynamicSharedBytes = uint32_t(std::stoul(value()));
    else if (a == "-o")
      outDir = value();
    else if (a == "-j")
      cfg.threads = unsigned(std::stoul(value()));
    else if (a == "--no-race-check")
      cfg.raceCheck = false;
    else if (a == "-h" || a == "--help")
      usage();
    else if (ptxPath.empty())
      ptxPath = a;
    else
      argSpecs.push_back(a);
  }
  if (ptxPath.empty() || kernel.empty())
    usage();
  cfg.block[0] = warps * 32;
  try {
    std::ifstream f(ptxPath);
    if (!f)
      throw SimError("cannot open " + ptxPath);
    std::string text((std::istreambuf_iterator<char>(f)), {});
    Module m = parsePTX(text);
    std::vector<NpyArray> arrays(argSpecs.size());
    std::vector<LaunchArg> args(argSpecs.size());
    for (size_t i = 0; i < argSpecs.size(); ++i) {
      const std::string &s = argSpecs[i];
      LaunchArg &a = args[i];
      if (s == "null") {
        a.kind = LaunchArg::Null;
      } else if (s.rfind("i:", 0) == 0) {
        a.kind = LaunchArg::Int;
        a.i = std::stoll(s.substr(2), nullptr, 0);
      } else if (s.rfind("f:", 0) == 0) {
        a.kind = LaunchArg::Float;
        a.f = std::stod(s.substr(2));
      } else {
        if (s.rfind("zeros:", 0) == 0) {
          arrays[i].dtype = "|u1";
          uint64_t n = std::stoull(s.substr(6));
          arrays[i].shape = {n};
          arrays[i].data.assign(n, 0);
        } else {
          arrays[i] = readNpy(s);
        }
        a.kind = LaunchArg::Buffer;
        a.host = arrays[i].data.data();
        a.bytes = arrays[i].data.size();
        a.writeBack = true;
        a.name = "argument " + std::to_string(i) + " (" + s + ")";
      }
    }
    LaunchResult r = launch(m, kernel, cfg, args);
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].kind == LaunchArg::Buffer)
        writeNpy(outDir + "/arg" + std::to_string(i) + ".npy", arrays[i]);
    std::cout << "{";
    bool first = true;
    for (auto &[k, v] : r.counters.toMap()) {
      std::cout << (first ? "" : ", ") << "\"" << k << "\": " << v;
      first = false;
    }
    std::cout << ", \"seconds\": " << r.seconds << "}\n";
  } catch (const SimError &e) {
    std::cerr << "tessel-gpusim: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
