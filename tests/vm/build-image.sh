#!/bin/bash
# Build cradle's discovery live image for the VM tests (tests/vm/README.md):
# a Debian 12 root with systemd, udev and the host tools the agent runs,
# the static cradle and packaging/systemd/'s unit, packed as initramfs
# archives so the root runs from RAM, as the RHCOS live ISO's does.
#
#   tests/vm/build-image.sh CRADLE_BINARY
#
# The last line on stdout is the image's directory; everything else goes
# to stderr. The image is two layers, each cached by the hash of its inputs
# under ${CRADLE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cradle/vm-image}:
#
#   base/KEY/      vmlinuz, base.cpio, kernel-release: debootstrap of the
#                  package list below, pruned (KEY: that part of this script)
#   cradle/KEY/    cradle.cpio: /usr/bin/cradle, the unit enabled by its
#                  preset (KEY: the base's KEY, the binary, the unit's files)
#                  and manifest: the kernel and the archives, in order
#
# The kernel unpacks concatenated archives in order, so the runner appends a
# third, per-VM one (the environment file, the network) without repacking
# anything: as coreos-installer embeds an Ignition config into a live ISO.
# A rebuilt cradle repacks only cradle.cpio (a second); a changed package
# list debootstraps again (a minute or two). Directories unused for 30 days
# are removed. Concurrent callers wait for each other (flock).
#
# Needs root, debootstrap, cpio and Debian's archive (the mirror of the
# machine's own apt sources).

set -euo pipefail

die() {
        echo "build-image: error: $*" >&2
        exit 1
}
log() { echo "build-image: $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 CRADLE_BINARY"
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, device nodes)"
BINARY=$(readlink -f "$1")
[ -x "$BINARY" ] || die "no executable at $1"
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
SCRIPT=$HERE/$(basename "$0")
SUITE=bookworm

# the Debian mirror of this machine's apt sources (deb822 or one-line)
mirror() {
        local m
        m=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/\?$/\1/p' \
                /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 || true)
        [ -n "$m" ] || m=$(sed -n 's/^deb \(\[[^]]*\] \)\?\(http[^ ]*\/debian\)\/\? .*/\2/p' \
                /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1 || true)
        [ -n "$m" ] || die "no Debian mirror in this machine's apt sources (/etc/apt/sources.list*)"
        echo "$m"
}

# What the image holds besides debootstrap's minbase: the init system and
# device manager, the storage stacks the installer cleans, the time daemon
# and DHCP client the agent's steps drive, the tools the agent and the tests
# run (dmidecode, ipmitool, efibootmgr, lsblk, findmnt, ip, ssh-keygen), and
# qemu's guest agent: the tests' command channel (a virtio-serial port).
PACKAGES="linux-image-amd64 systemd systemd-sysv udev dbus kmod iproute2
        lvm2 mdadm cryptsetup-bin chrony isc-dhcp-client
        dmidecode ipmitool efibootmgr util-linux procps e2fsprogs gdisk
        openssh-client ca-certificates qemu-guest-agent"

# Kernel modules kept (paths under lib/modules/VERSION/kernel/): the disk
# buses qemu emulates, device-mapper, md, loop, the NICs, IPMI, TPM, the
# file systems an installed disk holds; the rest of the 390 MB goes.
MODULES="arch crypto lib fs block net
        drivers/block drivers/nvme drivers/ata drivers/scsi drivers/md drivers/virtio
        drivers/cdrom drivers/char drivers/usb/storage drivers/usb/host drivers/usb/core
        drivers/usb/common drivers/net/virtio_net.ko drivers/net/net_failover.ko
        drivers/net/tun.ko drivers/net/veth.ko drivers/net/bonding drivers/net/macvlan.ko
        drivers/net/ethernet/intel drivers/firmware drivers/acpi drivers/input/serio"
MODULES_DROPPED="arch/x86/kvm net/wireless net/mac80211 net/bluetooth fs/ocfs2 fs/gfs2 fs/nfs fs/nfsd fs/ceph
        fs/smb fs/cifs fs/ubifs fs/afs fs/dlm drivers/scsi/lpfc drivers/scsi/qla2xxx
        drivers/scsi/mpt3sas drivers/scsi/megaraid drivers/scsi/bfa drivers/scsi/be2iscsi
        drivers/scsi/qedf drivers/scsi/qedi drivers/scsi/aacraid drivers/scsi/smartpqi
        drivers/scsi/hpsa.ko drivers/scsi/fnic drivers/scsi/snic drivers/scsi/pm8001
        drivers/scsi/qla4xxx drivers/scsi/mpi3mr drivers/scsi/csiostor drivers/scsi/cxgbi
        drivers/scsi/bnx2fc drivers/scsi/elx drivers/char/tpm/st33zp24 drivers/char/agp
        drivers/char/ipmi/ipmi_ssif.ko drivers/net/ethernet/intel/ice drivers/net/ethernet/intel/i40e
        drivers/net/ethernet/intel/iavf drivers/net/ethernet/intel/ixgbe drivers/net/ethernet/intel/idpf"

CACHE=${CRADLE_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/cradle/vm-image}
mkdir -p "$CACHE" || die "cannot create the cache directory '$CACHE' (set CRADLE_VM_CACHE)"
exec 9> "$CACHE/.lock"
flock 9
find "$CACHE" -mindepth 3 -maxdepth 3 -name .used -mtime +30 -printf '%h\n' 2>/dev/null |
        while read -r old; do log "removing unused $old" && rm -rf "$old"; done

hash() { sha256sum | cut -c1-16; }

# --- base: Debian's packages ------------------------------------------------
# (the recipe: this script from the package list to the cradle layer, so
# that editing the header or the layers after it debootstraps nothing)
BASE_KEY=$(sed -n '/^PACKAGES=/,/^# --- cradle/p' "$SCRIPT" | hash)
BASE=$CACHE/base/$BASE_KEY
build_base() {
        command -v debootstrap > /dev/null || die "debootstrap is not installed (tools/deps --test)"
        command -v cpio > /dev/null || die "cpio is not installed (tools/deps --test)"
        local work=$CACHE/base/.work-$BASE_KEY root start
        start=$(date +%s)
        rm -rf "$work"
        mkdir -p "$work"
        root=$work/root
        local mirror_url
        mirror_url=$(mirror)
        log "debootstrap $SUITE from $mirror_url into $root (a few minutes)"
        # INITRD=No: the kernel package makes no initramfs of its own (the
        # image is one); mdadm's and lvm2's hooks have none to update
        # the packages are kept for the next build (a changed recipe
        # downloads nothing again)
        mkdir -p "$CACHE/debs"
        if ! INITRD=No debootstrap --variant=minbase --include="$(echo $PACKAGES | tr ' ' ,)" \
                --cache-dir="$CACHE/debs" \
                "$SUITE" "$root" "$mirror_url" > "$work/debootstrap.log" 2>&1; then
                tail -n 30 "$work/debootstrap.log" >&2
                die "debootstrap failed (log: $work/debootstrap.log)"
        fi
        local kver
        kver=$(ls "$root/lib/modules")
        [ "$(echo "$kver" | wc -w)" = 1 ] || die "expected one kernel in the root, found: $kver"
        cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
        echo "$kver" > "$work/kernel-release"

        # the modules: only the kept trees, minus the big drivers in them
        local mods=$root/lib/modules/$kver kept=$work/kept-modules m
        mkdir -p "$kept"
        for m in $MODULES; do
                [ -e "$mods/kernel/$m" ] || continue
                mkdir -p "$kept/$(dirname "$m")"
                mv "$mods/kernel/$m" "$kept/$m"
        done
        for m in $MODULES_DROPPED; do rm -rf "${kept:?}/$m"; done
        rm -rf "$mods/kernel"
        mv "$kept" "$mods/kernel"
        chroot "$root" depmod -a "$kver"

        # what a live root in RAM does not need
        rm -rf "$root"/boot/* "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
                "$root"/usr/share/locale/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* \
                "$root"/usr/lib/firmware
        # the kernel starts /init from the initramfs: systemd, as on a
        # live ISO once it has switched root (no /etc/initrd-release: this
        # is the real root)
        ln -sf /lib/systemd/systemd "$root/init"
        # the network: systemd-networkd with what the runner's per-VM
        # archive writes to /etc/systemd/network (static addresses per MAC);
        # network-online.target waits for those links only
        chroot "$root" systemctl enable systemd-networkd.service systemd-networkd-wait-online.service > /dev/null 2>&1
        # a server's boot: multi-user.target; e2scrub has no ext4 on LVM to
        # check in RAM
        chroot "$root" systemctl set-default multi-user.target > /dev/null 2>&1
        chroot "$root" systemctl mask e2scrub_reap.service > /dev/null 2>&1
        # root has no password (the serial console's login)
        chroot "$root" passwd -d root > /dev/null
        : > "$root/etc/machine-id"
        echo cradle-live > "$root/etc/hostname"
        # debootstrap copied this machine's resolver into the root: a guest
        # would send the agent's and chrony's DNS queries there. None here
        # (the runner's per-VM archive may name the lab's own)
        echo "# no nameserver: the VM's network is the test's lab" > "$root/etc/resolv.conf"
        printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
        [ -e "$root/dev/console" ] || mknod -m 600 "$root/dev/console" c 5 1

        (cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) > "$work/base.cpio"
        rm -rf "$root"
        echo "$(($(date +%s) - start))" > "$work/build-seconds"
        rm -rf "$BASE"
        mkdir -p "$(dirname "$BASE")"
        mv "$work" "$BASE"
        log "base $BASE_KEY: $(du -m "$BASE/base.cpio" | cut -f1) MB, kernel $kver, $(cat "$BASE/build-seconds") s"
}
[ -f "$BASE/base.cpio" ] || build_base
touch "$BASE/.used"

# --- cradle: the static binary and the unit ---------------------------------
UNIT_DIR=$SRC/packaging/systemd
CRADLE_KEY=$( (echo "$BASE_KEY"; sha256sum "$BINARY" "$UNIT_DIR/cradle-agent.service.in" \
        "$UNIT_DIR/80-cradle.preset" "$UNIT_DIR/agent.env.example" "$HERE/coreos-installer" | cut -d' ' -f1) | hash)
LAYER=$CACHE/cradle/$CRADLE_KEY
build_cradle() {
        local work=$CACHE/cradle/.work-$CRADLE_KEY root
        rm -rf "$work"
        root=$work/root
        mkdir -p "$root/usr/bin" "$root/usr/lib/systemd/system" "$root/usr/lib/systemd/system-preset" \
                "$root/usr/share/cradle" "$root/etc/cradle"
        install -m 0755 "$BINARY" "$root/usr/bin/cradle"
        # coreos-installer is not packaged in Debian 12: our stand-in, where
        # the RHCOS live ISO has the real one (tests/vm/coreos-installer)
        install -m 0755 "$HERE/coreos-installer" "$root/usr/bin/coreos-installer"
        # the unit as a --prefix=/usr build installs it (packaging/systemd/meson.build)
        sed -e 's|@bindir@|/usr/bin|g' -e 's|@sysconfdir@|/etc|g' "$UNIT_DIR/cradle-agent.service.in" \
                > "$root/usr/lib/systemd/system/cradle-agent.service"
        sed -e 's|@bindir@|/usr/bin|g' -e 's|@sysconfdir@|/etc|g' "$UNIT_DIR/agent.env.example" \
                > "$root/usr/share/cradle/agent.env.example"
        install -m 0644 "$UNIT_DIR/80-cradle.preset" "$root/usr/lib/systemd/system-preset/"
        chmod 0700 "$root/etc/cradle"
        # enabled the way an image build enables it: by its preset
        systemctl --root="$root" preset cradle-agent.service > /dev/null 2>&1 ||
                die "systemctl --root preset cradle-agent.service failed"
        [ -L "$root/etc/systemd/system/multi-user.target.wants/cradle-agent.service" ] ||
                die "the preset did not enable cradle-agent.service"
        (cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) > "$work/cradle.cpio"
        rm -rf "$root"
        rm -rf "$LAYER"
        mv "$work" "$LAYER"
}
[ -f "$LAYER/cradle.cpio" ] || build_cradle
touch "$LAYER/.used"

# --- the image: what the runner boots ----------------------------------------
# (the runner concatenates the archives with its per-VM one: no copy here)
{
        echo "kernel $BASE/vmlinuz"
        echo "initrd $BASE/base.cpio"
        echo "initrd $LAYER/cradle.cpio"
        echo "kernel-release $(cat "$BASE/kernel-release")"
        echo "base-key $BASE_KEY"
        echo "base-build-seconds $(cat "$BASE/build-seconds")"
        echo "cradle-key $CRADLE_KEY"
} > "$LAYER/manifest.tmp"
mv "$LAYER/manifest.tmp" "$LAYER/manifest"
echo "$LAYER"
