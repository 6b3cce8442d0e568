#!/usr/bin/env bash
# Fetches a Debian kernel image package for the VM test bed (internal/testbed/vm)
# and unpacks it into the kernel cache, where internal/testbed.Kernel finds it:
#   $WPG_KERNEL_CACHE, else $XDG_CACHE_HOME/wpg-kernels, else ~/.cache/wpg-kernels
# as CACHE/RELEASE/{boot/vmlinuz-RELEASE,lib/modules/RELEASE}, plus an
# uncompressed boot/vmlinux-RELEASE when zstd or xz can make one (QEMU boots it
# through PVH, skipping the decompressor: ~2 s less per boot under TCG).
# A kernel already in the cache is kept. Needs apt-get (Debian bookworm
# sources) and dpkg; no root needed for the download itself.
#
# usage: scripts/fetch-kernel.sh [RELEASE]   (default 6.12.117+deb12-cloud-amd64)
set -euo pipefail
release="${1:-6.12.117+deb12-cloud-amd64}"
cache="${WPG_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wpg-kernels}"
dest="$cache/$release"
if [ -s "$dest/boot/vmlinuz-$release" ] && [ -f "$dest/lib/modules/$release/modules.dep" ]; then
	echo "kernel $release: cached in $dest"
	exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q "linux-image-$release" 2>&1 | grep -v 'unsandboxed' || true)
deb=$(ls "$work"/linux-image-"$release"_*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
	echo "fetch-kernel: apt-get download linux-image-$release got nothing: run apt-get update, or check that the release exists (apt-cache search linux-image-)" >&2
	exit 1
fi
dpkg -x "$deb" "$work/root"
img="$work/root/boot/vmlinuz-$release"
# The bzImage carries the kernel compressed; cut it out at the magic and
# decompress it (zstd and xz stop with an error at the trailing data after a
# complete stream, so their status is not checked; the size is).
vmlinux="$work/root/boot/vmlinux-$release"
off=$(LC_ALL=C grep -abo $'\x28\xb5\x2f\xfd' "$img" | head -1 | cut -d: -f1 || true)
if [ -n "$off" ] && command -v zstd >/dev/null; then
	tail -c +$((off + 1)) "$img" | zstd -dcq > "$vmlinux" 2>/dev/null || true
else
	off=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$img" | head -1 | cut -d: -f1 || true)
	if [ -n "$off" ] && command -v xz >/dev/null; then
		tail -c +$((off + 1)) "$img" | xz -dcq > "$vmlinux" 2>/dev/null || true
	fi
fi
if [ -f "$vmlinux" ] && ! head -c 4 "$vmlinux" | grep -q $'\x7fELF'; then
	rm -f "$vmlinux" # not an ELF image: boot the bzImage instead
fi
rm -rf "$dest"
mv "$work/root" "$dest"
echo "kernel $release: unpacked into $dest$( [ -f "$dest/boot/vmlinux-$release" ] && echo ' (with vmlinux for PVH boot)')"
