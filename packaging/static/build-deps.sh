#!/bin/bash
# Build the static libraries a static cradle links, from Debian 12's own
# source packages, into OUTDIR/prefix/{include,lib}.
#
#   packaging/static/build-deps.sh [OUTDIR]
#
# Without OUTDIR the build goes to a cache shared by every build directory
# and checkout of this user on this machine:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/cradle/static-deps/KEY
# where KEY hashes this script, the compiler's version and the architecture:
# a changed recipe gets a directory of its own (seeded from the newest
# finished one, so that only the steps whose recipe changed are rebuilt),
# and a finished prefix is never modified under a build that links it.
# Key directories unused for 30 days are removed. The last line on stdout
# is the prefix (OUTDIR/prefix); everything else goes to stderr.
#
# What comes from where (see README.md beside this file):
#   OpenSSL (libssl.a, libcrypto.a)  built from Debian's openssl source, trimmed
#   curl (libcurl.a)                 built from Debian's curl source: HTTP(S) only,
#                                    over that OpenSSL, c-ares resolver, zlib
#   libudev.a (with libsystemd)      built from Debian's systemd source, every
#                                    optional dependency off, only that target
#   c-ares, json-c, libblkid, zlib,  Debian's own .a (libc-ares-dev, libjson-c-dev,
#   libcap                           libblkid-dev, zlib1g-dev, libcap-dev), copied
#
# Non-interactive and idempotent: a finished build leaves OUTDIR/prefix/.stamp;
# a re-run with the same recipe returns at once. Each component has its own
# stamp under OUTDIR/stamps, so a failed or changed step only redoes itself
# and what depends on it. Missing build packages are installed with apt-get
# (root only); a deb-src entry mirroring the machine's Debian entries is
# added when `apt-cache showsrc` cannot see a source package.
#
# Environment: CC (default cc), JOBS (default nproc), CRADLE_DEPS_VERBOSE=1
# to show build output (on stderr) instead of logging it to OUTDIR/logs.

set -euo pipefail

die() {
        echo "build-deps: error: $*" >&2
        exit 1
}
log() { echo "build-deps: $*" >&2; }

[ $# -le 1 ] || die "usage: $0 [OUTDIR]"
SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
CC=${CC:-cc}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
export CC

# The whole recipe is this file: any change rebuilds what changed (per step).
RECIPE=$(sha256sum "$SCRIPT" | cut -c1-16)

# done_prefix DIR: true when DIR holds a prefix finished by this recipe.
done_prefix() { [ -f "$1/prefix/.stamp" ] && [ "$(cat "$1/prefix/.stamp")" = "$RECIPE" ]; }

if [ $# -eq 1 ]; then
        mkdir -p "$1" || die "cannot create '$1'"
        OUT=$(cd "$1" && pwd)
else
        CACHE=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/cradle/static-deps
        KEY=$( (echo "$RECIPE"; $CC -dumpmachine; $CC --version | head -n 1) | sha256sum | cut -c1-16)
        OUT=$CACHE/$KEY
        mkdir -p "$OUT" || die "cannot create the cache directory '$OUT' (set CRADLE_STATIC_DEPS to another one)"
        touch "$OUT/.used"
        # Forget recipes nobody built with for a month.
        find "$CACHE" -mindepth 2 -maxdepth 2 -name .used -mtime +30 -printf '%h\n' 2>/dev/null |
                while read -r old; do
                        [ "$old" != "$OUT" ] && log "removing unused cache $old" && rm -rf "$old"
                done
fi
PREFIX=$OUT/prefix
STAMPS=$OUT/stamps
LOGS=$OUT/logs
SRC=$OUT/src
BUILD=$OUT/build

if done_prefix "$OUT"; then
        echo "$PREFIX"
        exit 0
fi

mkdir -p "$STAMPS" "$LOGS" "$SRC" "$BUILD"
exec 9>"$OUT/.lock"
flock 9 || die "cannot lock '$OUT/.lock'"
# Another run may have finished while we waited for the lock.
if done_prefix "$OUT"; then
        echo "$PREFIX"
        exit 0
fi
# A new cache key directory starts from the newest finished one: its
# sources, prefix and step stamps, so that only the changed steps rebuild.
if [ -n "${CACHE:-}" ] && [ -z "$(ls -A "$STAMPS")" ]; then
        seed=$(find "$CACHE" -mindepth 3 -maxdepth 3 -path '*/prefix/.stamp' -printf '%T@ %h\n' 2>/dev/null |
                sort -rn | awk '{ print $2 }' | sed 's|/prefix$||' | grep -vxF "$OUT" | head -n 1 || true)
        if [ -n "$seed" ]; then
                log "starting from $seed"
                # sources as hard links (no step writes into a file it did
                # not create), the rest as copies
                cp -al "$seed/src" "$OUT/"
                cp -a "$seed/stamps" "$seed/prefix" "$OUT/"
        fi
fi
rm -f "$PREFIX/.stamp"
START=$(date +%s)

# Flags for every library we compile: small code, sections the final link
# can drop (--gc-sections), Debian's usual hardening.
DEPS_CFLAGS="-Os -g0 -ffunction-sections -fdata-sections -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fno-asynchronous-unwind-tables -fno-unwind-tables"

# run LOGNAME CMD...: run a build command, its output in LOGS/LOGNAME.log;
# on failure show the log's tail and stop.
run() {
        local name=$1
        shift
        if [ "${CRADLE_DEPS_VERBOSE:-0}" = 1 ]; then
                "$@" >&2 || die "step '$name' failed: $*"
                return
        fi
        echo "+ $*" >>"$LOGS/$name.log"
        if ! "$@" >>"$LOGS/$name.log" 2>&1; then
                tail -n 40 "$LOGS/$name.log" >&2
                die "step '$name' failed: $* (full log: $LOGS/$name.log)"
        fi
}

# ---------------------------------------------------------------- packages

BUILD_PKGS=(
        build-essential dpkg-dev perl pkg-config   # compilers, apt-get source
        autoconf automake libtool                  # curl's buildconf
        meson ninja-build gperf python3-jinja2     # systemd's build
        libcap-dev libmount-dev                    # systemd's meson requires them
        libjson-c-dev                              # the Debian .a we use
        libzstd-dev liblz4-dev                     # systemd's meson finds zstd and lz4 by them
)

install_packages() {
        local missing=() p
        for p in "${BUILD_PKGS[@]}"; do
                [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
                        missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        [ "$(id -u)" = 0 ] ||
                die "missing build packages: ${missing[*]} (run as root, or: apt-get install ${missing[*]})"
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$LOGS/apt.log" 2>&1; then
                run apt apt-get update -q
                run apt apt-get install -y -q --no-install-recommends "${missing[@]}"
        fi
}

# ---------------------------------------------------------------- sources

DEBSRC_FILE=/etc/apt/sources.list.d/cradle-deb-src.sources

# The machine's Debian 'deb' entries (deb822 stanzas and one-line entries),
# turned into deb-src stanzas for the same archives and suites.
debsrc_content() {
        local f
        for f in /etc/apt/sources.list.d/*.sources; do
                [ -f "$f" ] && [ "$f" != "$DEBSRC_FILE" ] || continue
                awk 'BEGIN { RS = ""; FS = "\n" }
                {
                        deb = 0; debian = 0; enabled = 1
                        for (i = 1; i <= NF; i++) {
                                if ($i ~ /^Types:/ && $i ~ /[ \t]deb([ \t]|$)/) deb = 1
                                if ($i ~ /^URIs:/ && $i ~ /\/debian(-security)?\/?([ \t]|$)/) debian = 1
                                if ($i ~ /^Enabled:[ \t]*no/) enabled = 0
                        }
                        if (!deb || !debian || !enabled) next
                        for (i = 1; i <= NF; i++) {
                                if ($i ~ /^#/) continue
                                if ($i ~ /^Types:/) print "Types: deb-src"; else print $i
                        }
                        print ""
                }' "$f"
        done
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
                [ -f "$f" ] || continue
                awk '$1 == "deb" && $0 ~ /\/debian(-security)?\/?[ \t]/ {
                        opts = ""; i = 2
                        if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
                        comps = ""; for (j = i + 2; j <= NF; j++) comps = comps " " $j
                        printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents:%s\n", $i, $(i + 1), comps
                        if (opts ~ /signed-by=/) { sub(/.*signed-by=/, "", opts); sub(/[ \]].*/, "", opts); print "Signed-By: " opts }
                        print ""
                }' "$f"
        done
}

# (grep -q would close the pipe early: with pipefail, apt-cache's SIGPIPE fails it.)
has_source() { apt-cache showsrc --only-source "$1" 2>/dev/null | grep -c '^Version:' >/dev/null; }

ensure_debsrc() {
        local pkg=$1 want
        has_source "$pkg" && return 0
        [ "$(id -u)" = 0 ] ||
                die "no deb-src entry lets apt see the source of '$pkg'; as root, add one for the machine's Debian archive"
        want=$(debsrc_content)
        [ -n "$want" ] || die "found no Debian 'deb' entry in /etc/apt/sources.list* to mirror as deb-src"
        if [ ! -f "$DEBSRC_FILE" ] || [ "$(cat "$DEBSRC_FILE")" != "$want" ]; then
                log "adding $DEBSRC_FILE"
                printf '%s\n' "$want" >"$DEBSRC_FILE"
        fi
        run apt apt-get update -q
        has_source "$pkg" ||
                die "apt still sees no source package '$pkg' after adding $DEBSRC_FILE"
}

# fetch_source PKG: extract Debian's source package PKG (newest version the
# archive really serves) under SRC; prints the directory.
fetch_source() {
        local pkg=$1 v dir
        # relative to SRC, so that a copied cache finds its own sources
        # (older caches wrote absolute paths: keep their last two parts)
        dir=$(cat "$SRC/$pkg.dir" 2>/dev/null || true)
        if [[ "$dir" == /* ]]; then
                dir=$(basename "$(dirname "$dir")")/$(basename "$dir")
        fi
        if [ -n "$dir" ] && [ -d "$SRC/$dir" ]; then
                echo "$SRC/$dir"
                return 0
        fi
        ensure_debsrc "$pkg"
        # Newest first; a mirror may list a version whose files it lacks.
        for v in $(apt-cache showsrc --only-source "$pkg" | awk '/^Version:/ { print $2 }' | sort -urV); do
                rm -rf "$SRC/$pkg-fetch"
                mkdir -p "$SRC/$pkg-fetch"
                if (cd "$SRC/$pkg-fetch" && apt-get source -q --only-source "$pkg=$v") \
                        >>"$LOGS/fetch-$pkg.log" 2>&1; then
                        dir=$(find "$SRC/$pkg-fetch" -mindepth 1 -maxdepth 1 -type d | head -n 1)
                        [ -n "$dir" ] || die "apt-get source $pkg=$v unpacked nothing"
                        log "fetched source $pkg $v"
                        echo "${dir#"$SRC"/}" >"$SRC/$pkg.dir"
                        echo "$dir"
                        return 0
                fi
                log "source $pkg $v not fetchable, trying an older one"
        done
        tail -n 20 "$LOGS/fetch-$pkg.log" >&2
        die "cannot fetch Debian source package '$pkg' (log: $LOGS/fetch-$pkg.log)"
}

# need_step NAME KEY: true when step NAME must run: its stamp differs from
# KEY (the step's options and flags) plus a hash of the shell function that
# calls need_step, so that editing a step's commands rebuilds it too.
# done_step NAME KEY, called from the same function, writes the stamp.
step_stamp() { echo "$1 $(declare -f "$2" | sha256sum | cut -c1-16)"; }
need_step() { [ "$(cat "$STAMPS/$1" 2>/dev/null || true)" != "$(step_stamp "$2" "${FUNCNAME[1]}")" ]; }
done_step() { step_stamp "$2" "${FUNCNAME[1]}" >"$STAMPS/$1"; }

# ---------------------------------------------------------------- symbols

# privatize PREFIX API_REGEX ARCHIVE...: rename every global symbol the
# archives define but do not export as API (API_REGEX) to PREFIX<name>, in
# definitions and references alike (one map for all the archives given).
# libsystemd, libudev and util-linux's libblkid keep their helpers (strv_free,
# parse_size, log_internal, pager_open...) global in their .a files: names
# that clash with each other and with cradle's own systemd-style helpers in
# a static link, while the shared libraries export only their API.
privatize() {
        local prefix=$1 api=$2 map a
        shift 2
        map=$(mktemp)
        for a in "$@"; do
                nm -g --defined-only "$a" 2>/dev/null | awk 'NF == 3 { print $3 }'
        done | grep -vE "$api" | sort -u | awk -v p="$prefix" '{ print $1, p $1 }' >"$map"
        for a in "$@"; do
                objcopy --redefine-syms="$map" "$a" || die "objcopy --redefine-syms failed on $a"
        done
        rm -f "$map"
}

# ---------------------------------------------------------------- Debian .a

# json-c and libcap: Debian's static archives link cleanly (neither needs
# more than libc), so copy them with their headers into PREFIX, which makes
# PREFIX self-contained and shadows nothing by accident. libcap is for
# libudev.a: systemd's capability-util.c (pulled in with sd-bus) calls it;
# links with --gc-sections drop it again. Their unwind tables go, as in the
# libraries compiled here (DEPS_CFLAGS).
DEBIAN_LIBS=(libjson-c.a libcap.a)
copy_debian_libs() {
        local key
        key="debian-libs no-eh-frame ${DEBIAN_LIBS[*]} $(dpkg-query -W -f='${Version} ' libjson-c-dev libcap-dev)"
        need_step debian-libs "$key" || return 0
        log "copying Debian's ${DEBIAN_LIBS[*]}"
        mkdir -p "$PREFIX/lib" "$PREFIX/include"
        local a
        for a in "${DEBIAN_LIBS[@]}"; do
                [ -f "$SYSLIB/$a" ] || die "$SYSLIB/$a is missing (its -dev package ships it)"
                cp "$SYSLIB/$a" "$PREFIX/lib/"
        done
        rm -rf "$PREFIX/include/json-c"
        cp -r /usr/include/json-c "$PREFIX/include/"
        for a in "${DEBIAN_LIBS[@]}"; do
                objcopy --remove-section=.eh_frame --remove-section=.rela.eh_frame "$PREFIX/lib/$a" ||
                        die "objcopy could not remove the unwind tables of $a"
        done
        done_step debian-libs "$key"
}

# ---------------------------------------------------------------- OpenSSL

# What cradle needs: TLS 1.2/1.3 client and server (tests), X.509 and PEM,
# RSA/ECDSA/EdDSA keys, ECDHE, AES-GCM and ChaCha20-Poly1305, SHA-1/2/3,
# MD5 (host IDs), HMAC/HKDF, the DRBG. Everything else is off; README.md
# records what each group of options saves.
OPENSSL_OPTS=(
        no-shared no-module no-dso no-engine no-legacy no-deprecated
        no-tests no-ui-console no-autoload-config
        # protocols
        no-ssl3 no-tls1 no-tls1_1 no-dtls no-dgram no-sctp no-srtp no-srp no-psk
        no-nextprotoneg no-comp no-ct no-ocsp no-ktls
        # algorithms nobody negotiates with us
        # (no-dh: TLS uses ECDHE; Go servers, assisted-service and kube-apiserver
        # among them, never offer finite-field DHE)
        no-aria no-bf no-blake2 no-camellia no-cast no-des no-dh no-dsa no-ec2m no-gost
        no-idea no-md4 no-mdc2 no-ocb no-rc2 no-rc4 no-rmd160 no-scrypt no-seed
        no-siphash no-siv no-sm2 no-sm3 no-sm4 no-whirlpool
        # message formats and services cradle does not use
        no-cms no-cmp no-ts no-rfc3779
        # runtime machinery; no-sock drops OpenSSL's own socket BIOs (curl
        # brings its own BIO), and with them the getaddrinfo() reference
        no-async no-multiblock no-sock
        # P-224/256/521 in constant-time C (see OPENSSL_EDIT below)
        enable-ec_nistp_64_gcc_128
        # error queue entries without source file names (the reason strings
        # stay); no CMAC (no TLS suite or X.509 use); no secure heap
        no-filenames no-cmac no-secure-memory
        # OpenSSL's own size switch: the C code paths the assembler does not
        # replace (the record layer's copies, GCM bookkeeping, curve25519's
        # squaring, SHA-2 in C) in their compact forms
        -DOPENSSL_SMALL_FOOTPRINT
)

# Edits to OpenSSL's build files, applied to a copy of the source (sed
# expressions on crypto/ec/build.info). P-256's assembler implementation
# (ecp_nistz256) carries a 150 KB table of precomputed multiples of the
# generator, which only speeds up key generation and signing; cradle only
# verifies and does one ECDHE per connection. Without it P-256 uses
# ecp_nistp256.c (enable-ec_nistp_64_gcc_128 above), also constant-time.
OPENSSL_EDIT=(
        -e 's/ecp_nistz256\.c ecp_nistz256-[a-z0-9_]+\.[sS] ?//'
        -e 's/ECP_NISTZ256_ASM ?//'
)

build_openssl() {
        local dir key t0
        key="openssl ${OPENSSL_OPTS[*]} ${OPENSSL_EDIT[*]} $DEPS_CFLAGS"
        need_step openssl "$key" || return 0
        dir=$(fetch_source openssl)
        t0=$(date +%s)
        log "building OpenSSL ($(basename "$dir"))"
        rm -rf "$BUILD/openssl" "$BUILD/openssl-src" "$PREFIX/include/openssl" "$PREFIX"/lib/lib{ssl,crypto}.a
        mkdir -p "$BUILD/openssl"
        # the source as hard links; sed -i replaces the file it edits
        cp -al "$dir" "$BUILD/openssl-src"
        dir=$BUILD/openssl-src
        sed -E -i "${OPENSSL_EDIT[@]}" "$dir/crypto/ec/build.info"
        # OPENSSLDIR /etc/ssl: Debian's hashed CA directory and openssl.cnf;
        # on hosts without them (RHCOS keeps its CAs under /etc/pki) nothing
        # is loaded and cradle names its CA file itself.
        (cd "$BUILD/openssl" && run openssl "$dir/Configure" --prefix="$PREFIX" --libdir=lib \
                --openssldir=/etc/ssl "${OPENSSL_OPTS[@]}" $DEPS_CFLAGS)
        run openssl make -C "$BUILD/openssl" -j"$JOBS" build_libs
        run openssl make -C "$BUILD/openssl" install_dev
        rm -rf "$BUILD/openssl" "$BUILD/openssl-src"
        log "built OpenSSL in $(($(date +%s) - t0)) s"
        done_step openssl "$key"
}

# ---------------------------------------------------------------- curl

CURL_OPTS=(
        --disable-shared --enable-static --disable-dependency-tracking
        --with-openssl="$PREFIX" --enable-ares="$PREFIX" --with-zlib="$PREFIX"
        --disable-threaded-resolver
        # cradle names its CA file; without one, OpenSSL's default paths
        --without-ca-bundle --without-ca-path --with-ca-fallback
        # HTTP and HTTPS only (proxies and MIME stay: proxies are configurable,
        # log upload is a multipart POST)
        --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp
        --disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap
        --disable-smb --disable-smtp --disable-gopher --disable-mqtt --disable-websockets
        --disable-manual --disable-libcurl-option --disable-ntlm --disable-ntlm-wb
        --disable-tls-srp --disable-alt-svc --disable-hsts --disable-doh --disable-netrc
        --disable-cookies --disable-progress-meter --disable-versioned-symbols
        --disable-openssl-auto-load-config
        # cradle never sets CURLOPT_VERBOSE or a debug callback: the verbose
        # strings could never be shown (CURLOPT_ERRORBUFFER's stay). Digest,
        # NTLM and Kerberos go (proxy credentials are Basic, as in Go's
        # net/http); no unix sockets, no curl_getdate(), no easy-option
        # or header APIs, no socketpair (used by the threaded resolver and
        # curl_multi_wakeup(), neither of which cradle uses)
        --disable-verbose --disable-crypto-auth --disable-unix-sockets --disable-dateparse
        --disable-get-easy-options --disable-headers-api --disable-socketpair --disable-dnsshuffle
        --without-brotli --without-zstd --without-libpsl --without-libidn2
        --without-nghttp2 --without-ngtcp2 --without-nghttp3 --without-quiche
        --without-libssh2 --without-libssh --without-librtmp --without-gssapi
        --without-libgsasl --without-hyper
)

build_curl() {
        local dir key t0
        # (the prefix's path is no part of the key: a copied cache keeps its curl)
        key="curl ${CURL_OPTS[*]//"$PREFIX"/PREFIX} $DEPS_CFLAGS openssl:$(cat "$STAMPS/openssl") zlib:$(cat "$STAMPS/zlib") cares:$(cat "$STAMPS/cares")"
        need_step curl "$key" || return 0
        dir=$(fetch_source curl)
        if [ ! -f "$dir/.cradle-prepared" ]; then
                log "preparing curl source (openssl flavour, buildconf)"
                # The series ends with the GnuTLS and NSS flavours' patches,
                # which debian/rules pops for the OpenSSL build: so do we.
                (cd "$dir" && run curl patch -R -p1 -i debian/patches/99_nss.patch &&
                        run curl patch -R -p1 -i debian/patches/90_gnutls.patch &&
                        run curl autoreconf -fi)
                touch "$dir/.cradle-prepared"
        fi
        t0=$(date +%s)
        log "building curl ($(basename "$dir"))"
        rm -rf "$BUILD/curl" "$PREFIX/include/curl" "$PREFIX/lib/libcurl.a"
        mkdir -p "$BUILD/curl"
        (cd "$BUILD/curl" && run curl "$dir/configure" --prefix="$PREFIX" "${CURL_OPTS[@]}" \
                CFLAGS="$DEPS_CFLAGS" CPPFLAGS="-I$PREFIX/include" LDFLAGS="-L$PREFIX/lib" \
                LIBS="-pthread -ldl")
        run curl make -C "$BUILD/curl/lib" -j"$JOBS"
        run curl make -C "$BUILD/curl/lib" install
        run curl make -C "$BUILD/curl/include" install
        rm -rf "$BUILD/curl"
        log "built curl in $(($(date +%s) - t0)) s"
        done_step curl "$key"
}

# ---------------------------------------------------------------- systemd

# Every optional dependency off but the two compressions sd-journal needs
# (skip-deps would turn those off too). Only libudev.a is built: it compiles
# libsystemd's sources as well (sd-device, sd-journal, sd-daemon, sd-bus...
# every sd_* function of libsystemd.sym links from it alone), so a separate
# libsystemd.a would only double the build.
SYSTEMD_OPTS=(
        -Dstatic-libudev=pic -Dstatic-libsystemd=false
        -Dfdisk=false -Dpwquality=false -Dseccomp=false -Dselinux=false -Dapparmor=false
        -Dpolkit=false -Dacl=false -Daudit=false -Dblkid=false -Dkmod=false -Dpam=false
        -Dmicrohttpd=false -Dlibcryptsetup=false -Dlibcryptsetup-plugins=false
        -Dlibcurl=false -Dlibidn2=false -Dlibidn=false -Dlibiptc=false -Dqrencode=false
        -Dgcrypt=false -Dgnutls=false -Dopenssl=false -Dp11kit=false -Dlibfido2=false
        -Dtpm2=false -Delfutils=false -Dzlib=false -Dbzip2=false -Dxkbcommon=false
        -Dpcre2=false -Dglib=false -Ddbus=false -Ddefault-dnssec=no -Ddefault-dns-over-tls=no
        # sd-journal must read the journal files of the host: journald
        # marks every file it creates with its compression (zstd on RHEL 9,
        # lz4 on RHEL 8) as an incompatible flag, and a reader that lacks
        # the algorithm refuses the whole file, compressed entries or not.
        # xz was journald's default before systemd 229 (RHEL 7): not needed.
        -Dzstd=true -Dlz4=true -Dxz=false
        -Dmode=release -Dtests=false -Dfuzz-tests=false -Dman=false -Dhtml=false
        -Dtranslations=false -Dstandalone-binaries=false
        -Dbpf-framework=false -Defi=false -Dgnu-efi=false -Dtpm=false
        -Dhwdb=false -Danalyze=false -Dkernel-install=false
        -Dlog-message-verification=false -Dlog-trace=false
)

build_systemd() {
        local dir key t0
        key="systemd ${SYSTEMD_OPTS[*]} $DEPS_CFLAGS privatized +compress"
        need_step systemd "$key" || return 0
        dir=$(fetch_source systemd)
        t0=$(date +%s)
        log "building libudev.a with libsystemd inside ($(basename "$dir"))"
        rm -rf "$BUILD/systemd" "$PREFIX/include/systemd" "$PREFIX"/include/libudev.h \
                "$PREFIX"/lib/lib{udev,systemd}.a
        # meson takes its own -O; pass the rest of DEPS_CFLAGS.
        run systemd env CFLAGS="${DEPS_CFLAGS/-Os/}" meson setup "$BUILD/systemd" "$dir" \
                --buildtype=minsize -Ddebug=false -Db_ndebug=true -Db_lto=false "${SYSTEMD_OPTS[@]}"
        # version.h first: the static target does not declare it needs it.
        grep -q '^#define HAVE_ZSTD 1$' "$BUILD/systemd/config.h" &&
                grep -q '^#define HAVE_LZ4 1$' "$BUILD/systemd/config.h" ||
                die "systemd configured without zstd or lz4 (log: $LOGS/systemd.log)"
        run systemd ninja -C "$BUILD/systemd" version.h
        run systemd ninja -C "$BUILD/systemd" -j"$JOBS" libudev.a src/basic/libbasic-compress.a
        mkdir -p "$PREFIX/include/systemd" "$PREFIX/lib"
        cp "$BUILD/systemd/libudev.a" "$PREFIX/lib/"
        # systemd 252's static libudev leaves out compress.c, which
        # sd-journal's journal-file.c calls (compression_to_string(),
        # decompress_blob(); the shared libsystemd links it): a link without
        # --gc-sections that pulls journal-file.o in failed with
        # "undefined reference to compression_to_string". Add it (built
        # with every compression library off, it only names the algorithms).
        local compress_objs
        mapfile -t compress_objs < <(find "$BUILD/systemd/src/basic/libbasic-compress.a.p" -name '*.o')
        [ ${#compress_objs[@]} -gt 0 ] || die "systemd built no compress.c object"
        run systemd ar rs "$PREFIX/lib/libudev.a" "${compress_objs[@]}"
        privatize cradle_systemd__ '^(sd|udev)_' "$PREFIX/lib/libudev.a"
        cp "$dir/src/libudev/libudev.h" "$PREFIX/include/"
        cp "$dir"/src/systemd/sd-*.h "$dir/src/systemd/_sd-common.h" "$PREFIX/include/systemd/"
        rm -rf "$BUILD/systemd"
        log "built libudev.a in $(($(date +%s) - t0)) s"
        done_step systemd "$key"
}

# ---------------------------------------------------------------- zstd, lz4

# sd-journal decompresses journal entries with them. Debian's libzstd.a
# carries the legacy (v0.5 to v0.7) decoders and no function sections (222 KB
# in cradle), Debian's liblz4.a no function sections (57 KB): built here for
# size instead. zstd: no legacy formats, the single-stream Huffman and short
# sequence decoders only, no error strings (decompression only gets slower,
# which reading a journal does not notice). The compressors stay in the
# archives (systemd's compress.c references them) and --gc-sections drops
# them from a program that only reads. The headers systemd compiles against
# are Debian's (libzstd-dev, liblz4-dev): the same versions.
ZSTD_OPTS=(
        ZSTD_LEGACY_SUPPORT=0 HUF_FORCE_DECOMPRESS_X1=1 ZSTD_FORCE_DECOMPRESS_SEQUENCES_SHORT=1
        ZSTD_NO_INLINE=1 ZSTD_STRIP_ERROR_STRINGS=1 ZSTD_NO_ASM=1 ZSTD_LIB_DICTBUILDER=0
        ZSTD_LIB_DEPRECATED=0 ZSTD_MULTITHREAD_SUPPORT=0
)

# build_make_lib STEP PKG ARCHIVE [MAKE ARGS...]: build ARCHIVE with PKG's
# lib/Makefile, in the source tree (its Makefiles include each other by
# relative paths), cleaned before and after. CFLAGS come from the
# environment, so that a Makefile can append its options' -D flags to them.
build_make_lib() {
        local step=$1 pkg=$2 archive=$3 dir key t0
        shift 3
        key="$step $* $DEPS_CFLAGS"
        need_step "$step" "$key" || return 0
        dir=$(fetch_source "$pkg")
        t0=$(date +%s)
        log "building $archive ($(basename "$dir"))"
        rm -f "$PREFIX/lib/$archive"
        run "$step" make -C "$dir/lib" clean
        run "$step" env CFLAGS="$DEPS_CFLAGS" make -C "$dir/lib" -j"$JOBS" "$archive" "$@"
        mkdir -p "$PREFIX/lib"
        cp "$dir/lib/$archive" "$PREFIX/lib/"
        run "$step" make -C "$dir/lib" clean
        log "built $archive in $(($(date +%s) - t0)) s"
        done_step "$step" "$key"
}
build_zstd() { build_make_lib zstd libzstd libzstd.a "${ZSTD_OPTS[@]}"; }
build_lz4() { build_make_lib lz4 lz4 liblz4.a; }

# ---------------------------------------------------------------- zlib, libyaml

# Plain C libraries whose sources need no configuring: compiled here with
# DEPS_CFLAGS instead of copying Debian's -O2/-O3 archives without function
# sections. zlib (curl's gzip, lib/gzip.h) at -Os: gzip of a log tarball
# gets slower, nothing cradle waits on; libyaml (kubeconfig files).
# build_cc_lib STEP PKG ARCHIVE "CPPFLAGS" "HEADERS" SOURCES...: compile the
# source package's SOURCES (paths in it) into PREFIX/lib/ARCHIVE and copy
# HEADERS to PREFIX/include.
build_cc_lib() {
        local step=$1 pkg=$2 archive=$3 cppflags=$4 headers=$5 dir key t0 f objs=()
        shift 5
        # (the cache's own path is no part of the key)
        key="$step ${cppflags//"$SRC"/SRC} $* $DEPS_CFLAGS"
        need_step "$step" "$key" || return 0
        dir=$(fetch_source "$pkg")
        t0=$(date +%s)
        log "building $archive ($(basename "$dir"))"
        rm -rf "$BUILD/$step" "$PREFIX/lib/$archive"
        mkdir -p "$BUILD/$step" "$PREFIX/lib" "$PREFIX/include"
        for f in "$@"; do
                objs+=("$BUILD/$step/$(basename "$f" .c).o")
                # shellcheck disable=SC2086 # flag lists
                run "$step" $CC $DEPS_CFLAGS $cppflags -c "$dir/$f" -o "${objs[-1]}"
        done
        run "$step" ar rcs "$PREFIX/lib/$archive" "${objs[@]}"
        for f in $headers; do
                cp "$dir/$f" "$PREFIX/include/"
        done
        rm -rf "$BUILD/$step"
        log "built $archive in $(($(date +%s) - t0)) s"
        done_step "$step" "$key"
}
build_zlib() {
        build_cc_lib zlib zlib libz.a "-D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN" "zlib.h zconf.h" \
                adler32.c compress.c crc32.c deflate.c gzclose.c gzlib.c gzread.c gzwrite.c \
                infback.c inffast.c inflate.c inftrees.c trees.c uncompr.c zutil.c
}
build_yaml() {
        local dir v
        dir=$(fetch_source libyaml)
        # the version, as its CMakeLists.txt sets it
        v=$(sed -n 's/^set (YAML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))$/\2/p' "$dir/CMakeLists.txt" | paste -sd.)
        [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "cannot tell libyaml's version from $dir/CMakeLists.txt"
        build_cc_lib yaml libyaml libyaml.a "-I$dir/include -DYAML_VERSION_MAJOR=${v%%.*} \
-DYAML_VERSION_MINOR=$(cut -d. -f2 <<<"$v") -DYAML_VERSION_PATCH=${v##*.} -DYAML_VERSION_STRING=\"$v\"" \
                include/yaml.h src/api.c src/dumper.c src/emitter.c src/loader.c src/parser.c \
                src/reader.c src/scanner.c src/writer.c
}

# ---------------------------------------------------------------- libblkid

# util-linux's libblkid, from Debian's source with Debian's paths
# (/etc/blkid.conf, the cache under /run) and the libraries' flags. Its
# internal helpers are renamed like libudev.a's (privatize).
BLKID_OPTS=(
        --prefix=/usr --sysconfdir=/etc --localstatedir=/var --runstatedir=/run
        --disable-all-programs --enable-libblkid --disable-shared --enable-static
        --disable-nls --disable-asciidoc --disable-bash-completion --without-udev
        --without-selinux --without-smack --without-systemd --without-python
        --without-readline --without-ncursesw --without-tinfo --without-audit
)

build_blkid() {
        local dir key t0
        key="blkid ${BLKID_OPTS[*]} $DEPS_CFLAGS privatized"
        need_step blkid "$key" || return 0
        dir=$(fetch_source util-linux)
        t0=$(date +%s)
        log "building libblkid.a ($(basename "$dir"))"
        rm -rf "$BUILD/util-linux" "$PREFIX/include/blkid" "$PREFIX/lib/libblkid.a"
        mkdir -p "$BUILD/util-linux" "$PREFIX/include/blkid" "$PREFIX/lib"
        (cd "$BUILD/util-linux" && run blkid "$dir/configure" "${BLKID_OPTS[@]}" CFLAGS="$DEPS_CFLAGS")
        run blkid make -C "$BUILD/util-linux" -j"$JOBS" libblkid.la
        cp "$BUILD/util-linux/.libs/libblkid.a" "$PREFIX/lib/"
        cp "$BUILD/util-linux/libblkid/src/blkid.h" "$PREFIX/include/blkid/"
        privatize cradle_blkid__ '^blkid_' "$PREFIX/lib/libblkid.a"
        rm -rf "$BUILD/util-linux"
        log "built libblkid.a in $(($(date +%s) - t0)) s"
        done_step blkid "$key"
}

# ---------------------------------------------------------------- c-ares

# c-ares, from Debian's source with Debian's options and the libraries' flags
CARES_OPTS=(--disable-shared --enable-static --enable-symbol-hiding --disable-tests)

build_cares() {
        local dir key t0
        key="cares ${CARES_OPTS[*]} $DEPS_CFLAGS"
        need_step cares "$key" || return 0
        dir=$(fetch_source c-ares)
        t0=$(date +%s)
        log "building libcares.a ($(basename "$dir"))"
        rm -rf "$BUILD/c-ares" "$PREFIX"/include/ares*.h "$PREFIX/lib/libcares.a"
        mkdir -p "$BUILD/c-ares"
        (cd "$BUILD/c-ares" && run cares "$dir/configure" --prefix="$PREFIX" "${CARES_OPTS[@]}" CFLAGS="$DEPS_CFLAGS")
        run cares make -C "$BUILD/c-ares/src/lib" -j"$JOBS"
        run cares make -C "$BUILD/c-ares/src/lib" install
        run cares make -C "$BUILD/c-ares/include" install
        rm -rf "$BUILD/c-ares"
        log "built libcares.a in $(($(date +%s) - t0)) s"
        done_step cares "$key"
}

# ---------------------------------------------------------------- check

# The archives in link order (each before those it uses): written to
# PREFIX/lib/link-order, which packaging/static/meson.build reads.
# libudev.a holds libsystemd too (sd_journal_*, sd_device_*, sd_booted...).
LINK_ORDER=(
        libcurl.a libcares.a   # curl -> c-ares, ssl, crypto, z
        libssl.a libcrypto.a
        libz.a libjson-c.a libblkid.a libyaml.a
        libudev.a libcap.a     # libudev + libsystemd -> libcap, zstd, lz4
        libzstd.a liblz4.a
)

# Every program must link, not only a --gc-sections one that happens to
# drop what is unresolved: reference every API symbol of every archive at
# once and link without --gc-sections. Any member an API function pulls in
# whose references nothing resolves fails here, not in some later target.
verify_prefix() {
        local t a args=()
        t=$(mktemp -d)
        for a in "${LINK_ORDER[@]}"; do
                [ -f "$PREFIX/lib/$a" ] || die "$PREFIX/lib/$a is missing"
                args+=("$PREFIX/lib/$a")
        done
        nm -g --defined-only "${args[@]}" 2>/dev/null |
                awk 'NF == 3 && $2 ~ /^[TDRB]$/ && $3 ~ /^[A-Za-z_][A-Za-z0-9_]*$/ { print $3 }' |
                grep -v '^cradle_' | sort -u >"$t/syms"
        {
                sed 's/.*/extern char &[];/' "$t/syms"
                echo 'void *cradle_all[] = {'
                sed 's/$/,/' "$t/syms"
                echo '};'
                echo 'int main(void) { return cradle_all[0] == 0; }'
        } >"$t/all.c"
        if ! $CC -w -o "$t/all" "$t/all.c" "${args[@]}" -pthread -ldl -lrt -lm >"$LOGS/verify.log" 2>&1; then
                grep -o "undefined reference to .*" "$LOGS/verify.log" | sort | uniq -c | head -n 20 >&2
                rm -rf "$t"
                die "the archives do not link on their own without --gc-sections (log: $LOGS/verify.log)"
        fi
        log "verified: $(wc -l <"$t/syms") API symbols of ${#LINK_ORDER[@]} archives link without --gc-sections"
        rm -rf "$t"
        printf '%s\n' "${LINK_ORDER[@]}" >"$PREFIX/lib/link-order"
}

# ---------------------------------------------------------------- main

install_packages
ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || true)
[ -n "$ARCH" ] || die "cannot tell the multiarch triplet (dpkg-architecture, from dpkg-dev)"
SYSLIB=/usr/lib/$ARCH
# Sources first, one after the other (they may add the deb-src entry).
for pkg in openssl curl systemd libzstd lz4 zlib libyaml util-linux c-ares; do
        fetch_source "$pkg" >/dev/null
done
copy_debian_libs
build_zlib
build_yaml
build_cares
# systemd does not depend on the OpenSSL -> curl chain: build it beside it,
# so that one's single-threaded steps (configure, install) leave no core idle.
kill_tree() {
        local c
        for c in $(pgrep -P "$1" || true); do
                kill_tree "$c"
        done
        kill "$1" 2>/dev/null || true
}
(build_systemd && build_zstd && build_lz4 && build_blkid) &
systemd_pid=$!
# If the main chain fails, do not leave the systemd build running.
trap 'kill_tree "$systemd_pid"' EXIT
build_openssl
build_curl
wait "$systemd_pid" || die "building libudev.a, libzstd.a, liblz4.a or libblkid.a failed (logs: $LOGS)"
trap - EXIT
verify_prefix

echo "$RECIPE" >"$PREFIX/.stamp"
log "static dependencies ready in $PREFIX ($(($(date +%s) - START)) s)"
echo "$PREFIX"
