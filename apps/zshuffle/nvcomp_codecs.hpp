// nVIDIA nvCOMP's batched compressors as zshuffle codecs, for comparing them with zshuffle's own
// in the same process: `zshuffle bench codec --vs nvcomp`, and `--codec nvcomp:NAME` wherever a
// command takes a codec by name. Built only where nvCOMP was found at configure time
// (cmake/ZsNvcomp.cmake; the build defines ZS_HAVE_NVCOMP).
//
// Five codecs, under private-use codec ids (their frames mean something only to programs that
// register the same codecs):
//
//   id  name              nvCOMP algorithm (data type, where it takes one)
//   24  nvcomp:cascaded   Cascaded (the column's integer type; floats as unsigned integers)
//   25  nvcomp:bitcomp    Bitcomp, lossless (the column's type)
//   26  nvcomp:ans        ANS (float32 for float32 columns, bytes otherwise)
//   27  nvcomp:lz4        LZ4
//   28  nvcomp:zstd       Zstd
//
// Each encodes fixed-width columns (not strings) on the GPU: a frame's values in 64 KiB chunks,
// all chunks of all frames of a batch compressed by one batched nvCOMP call (one per data type
// for Cascaded and Bitcomp), then packed into the frames (nvcomp_format.hpp gives the body).
// Decoding checks every frame's chunk table against its payload before nvCOMP reads a chunk,
// then (all but LZ4, whose decompressor checks its own bounds) the uncompressed size each chunk's
// header announces against the frame's, so that a chunk that does not announce its frame's size
// never reaches a decompressor that trusts it; it decompresses every chunk of the batch in one call and
// checks each chunk's status and size. A frame refused before decompression is not handed to
// nvCOMP: each of its chunks is replaced in the call by a small chunk that nvCOMP itself
// compressed, decompressed into scratch (nvCOMP's decompressors are documented for their own
// output only; an empty chunk, or a chunk of zeros, is undefined input to them), so nothing of
// the refused frame is read by nvCOMP or written into its target (nvcomp_format.hpp). A codec
// makes that chunk on its first decode of a chunk, on the GPU, and waits for it once.
// Frames are checksummed and validated by the codec base class as every codec's are.
//
// Trust: these codecs are baselines for the benchmarks, not for frames from untrusted peers.
// Damage by accident is caught by the payload checksum before nvCOMP reads the frame, and a
// chunk table that does not match the payload is refused before nvCOMP runs. Chunk contents
// that pass the checksum (crafted to, or in embedded frames, which carry none) and the table
// check reach nvCOMP, whose decompressors are documented as undefined on corrupt input (Zstd,
// and Cascaded and Bitcomp past a well-formed header) or were seen to read past such chunks
// (LZ4 under compute-sanitizer, H200, nvCOMP 6.0): there only the checksum stands. A batch
// with a refused frame may be refused as a whole by nvCOMP: its other frames are then refused
// too, never decoded wrong. tests/apps/nvcomp_codecs_test.cpp holds the cases that must be
// refused. zshuffle's own codecs validate every field before they read.
//
// nvCOMP has no CPU implementation of most of these: the CPU reference hooks (encode_host,
// decode_host) throw zs::error (unsupported). The codecs never become a type's default codec
// (their preference is below raw's).
#pragma once

#include <span>
#include <string>

#include "zs/codec.hpp"

namespace zs::nvcomp {

/// The five codecs, by id. Registering is separate (register_nvcomp_codecs), so that tests can
/// look at them without registering.
std::span<const codec* const> nvcomp_codecs();

/// Registers the five codecs with zs::register_codec (once; later calls do nothing). Throws
/// zs::error when their ids or names are taken by other codecs.
void register_nvcomp_codecs();

/// "nvCOMP 6.0.0" (the library's version, as it reports it).
std::string nvcomp_version();

}  // namespace zs::nvcomp
