//===- MmaInputs.cpp - The mma.sync instruction a dot's inputs take -------===//
#include "tessel/Dialect/TileGPU/IR/MmaInputs.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

using namespace mlir;

std::optional<tessel::tilegpu::MmaInputs>
tessel::tilegpu::mmaSyncInputs(tile::DotOp dot) {
  Type a = dot.getA().getType().getElementType();
  Type b = dot.getB().getType().getElementType();
  Type d = dot.getD().getType().getElementType();
  if (d.isF32() && tile::isOCPFP8Type(a) && tile::isOCPFP8Type(b))
    return MmaInputs::FP8;
  if (a != b)
    return std::nullopt;
  if ((d.isF32() || d.isF16()) && a.isF16())
    return MmaInputs::F16;
  if (d.isF32() && a.isBF16())
    return MmaInputs::BF16;
  if (d.isF32() && a.isF32()) {
    std::optional<tile::InputPrecision> precision = dot.getInputPrecision();
    if (!precision || *precision == tile::InputPrecision::tf32)
      return MmaInputs::TF32;
    if (*precision == tile::InputPrecision::tf32x3)
      return MmaInputs::TF32x3;
    return std::nullopt;
  }
  if (d.isInteger(32) && a.isInteger(8))
    return MmaInputs::S8;
  return std::nullopt;
}

int32_t tessel::tilegpu::mmaInputBits(MmaInputs inputs) {
  switch (inputs) {
  case MmaInputs::F16:
  case MmaInputs::BF16:
    return 16;
  case MmaInputs::TF32:
  case MmaInputs::TF32x3:
    return 32;
  case MmaInputs::S8:
  case MmaInputs::FP8:
    return 8;
  }
  return 0;
}

int32_t tessel::tilegpu::mmaSyncK(MmaInputs inputs) {
  return 256 / mmaInputBits(inputs);
}

bool tessel::tilegpu::takesWarpgroupMma(tile::DotOp dot) {
  std::optional<MmaInputs> inputs = mmaSyncInputs(dot);
  if (!inputs)
    return false;
  switch (*inputs) {
  case MmaInputs::F16: // fp32 results, and fp16 ones summed in fp32
  case MmaInputs::BF16:
  case MmaInputs::S8:
  case MmaInputs::FP8:
    return true;
  case MmaInputs::TF32:
  case MmaInputs::TF32x3:
    return false;
  }
  return false;
}
