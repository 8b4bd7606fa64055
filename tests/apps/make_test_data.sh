#!/usr/bin/env bash
# Makes the data folders that the command-line tests give one rank or a JSON name test:
#   OUT/short/     geoip4_lo.u32 with its last 100 rows cut off, and deb_homepages.txt
#   OUT/missing/   deb_homepages.txt alone (geoip4_lo.u32 is missing)
#   OUT/names/     geoip4_lo.u32 under a name with a double quote and a non-ASCII letter
# Files that stay whole are links to DATA's.
#
#   make_test_data.sh DATA OUT
set -euo pipefail
data=$1
out=$2
rm -rf "$out"
mkdir -p "$out/short" "$out/missing" "$out/names"
ln -s "$data/deb_homepages.txt" "$out/short/deb_homepages.txt"
ln -s "$data/deb_homepages.txt" "$out/missing/deb_homepages.txt"
size=$(stat -c %s "$data/geoip4_lo.u32")
head -c $((size - 100 * 4)) "$data/geoip4_lo.u32" >"$out/short/geoip4_lo.u32"
ln -s "$data/geoip4_lo.u32" "$out/names/quote\"and ü.u32"
