#!/usr/bin/env bash
# Installs Myeline on a tracker (or on the machine next to the broker): the binaries, the example
# configuration, the systemd units, the user "myeline" and the state directory; prints what to do
# next. The binaries are installed stripped of their debugging symbols. Run it again at any time:
# it changes only what differs. --uninstall removes exactly what the installs made (recorded in a
# manifest) and nothing else. See docs/raspberry-pi.md.
#
#   swift build -c release --static-swift-stdlib
#   sudo deploy/install.sh                 # install or update
#   sudo deploy/install.sh --uninstall     # remove it again
#
# Options:
#   --from DIR        where the built binaries are (default: .build/release of this checkout)
#   --prefix DIR      installation prefix (default: /usr/local): binaries in PREFIX/bin
#   --root DIR        install into DIR as if it were / (a staging directory, an image being
#                     built, a test); needs DIR/etc/passwd and DIR/etc/group; does not talk to
#                     systemd; allowed without root
#   --with-fleet-log  also install myeline-fleet-log.service (the aggregator writing the fleet's
#                     changes to the journal); it is never enabled automatically
#   --no-gpsd         do not require gpsd (the agent replays files, or gpsd runs elsewhere)
#   --uninstall       remove what earlier runs installed
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repository="$(dirname "$here")"
from="$repository/.build/release"
prefix=/usr/local
root=""
with_fleet_log=false
require_gpsd=true
uninstall=false
user=myeline

fail() {
    echo "install.sh: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
        --from) from="${2:?--from needs a directory}"; shift 2 ;;
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --root) root="${2:?--root needs a directory}"; shift 2 ;;
        --with-fleet-log) with_fleet_log=true; shift ;;
        --no-gpsd) require_gpsd=false; shift ;;
        --uninstall) uninstall=true; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) fail "unknown option $1 (see --help)" ;;
    esac
done

case "$prefix" in /*) ;; *) fail "--prefix must be an absolute path: $prefix" ;; esac
if [ -n "$root" ]; then
    [ -d "$root" ] || fail "--root $root is not a directory"
    root="$(cd "$root" && pwd)"
    [ "$root" != / ] || root=""
fi
if [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then
    fail "must be run as root (sudo $0 $*): it creates a system user and writes to /etc and $prefix"
fi

# Paths on the target system, and where they are written now (under --root).
bin_dir="$prefix/bin"
doc_dir="$prefix/share/doc/myeline"
# The aggregator's web map page (docs/web.md), found from the binary as ../share/myeline/web.
web_dir="$prefix/share/myeline/web"
config_dir=/etc/myeline
unit_dir=/etc/systemd/system
state_dir=/var/lib/myeline
manifest_dir="$prefix/share/myeline"
manifest="$root$manifest_dir/install-manifest"
# systemd is told about changes only on the running system, not in a staging root.
talk_to_systemd=false
[ -z "$root" ] && [ -d /run/systemd/system ] && talk_to_systemd=true

# The manifest: one line per thing an install made, "file PATH SHA256", "dir PATH" or "user NAME",
# in the order they were made. Entries of earlier runs are kept, so that an update that finds
# the user already there still knows that an earlier run created it.
declare -a made=()
if [ -f "$manifest" ]; then
    mapfile -t made < "$manifest"
fi
remember() { # ENTRY: a file's entry replaces the one with the same path
    local index
    for index in "${!made[@]}"; do
        if [ "${made[$index]}" = "$1" ]; then
            return
        elif [ "${1%% *}" = file ] && [ "${made[$index]% *}" = "${1% *}" ]; then
            made[index]="$1"
            return
        fi
    done
    made+=("$1")
    # Written at once, so that a run that fails half-way can still be undone.
    if [ -d "$root$manifest_dir" ]; then
        printf '%s\n' "${made[@]}" > "$manifest.new"
        mv "$manifest.new" "$manifest"
    fi
}

make_directory() { # PATH MODE [OWNER]: makes PATH and its missing parents, each remembered
    local path="" component
    local -a components
    IFS=/ read -r -a components <<< "${1#/}"
    for component in "${components[@]}"; do
        path="$path/$component"
        [ ! -d "$root$path" ] || continue
        install -d -m "$2" "$root$path"
        [ -z "${3:-}" ] || chown "$3" "$root$path"
        remember "dir $path"
    done
}

install_file() { # SOURCE PATH MODE
    local target="$root$2"
    if [ -f "$target" ] && cmp -s "$1" "$target"; then
        chmod "$3" "$target"
    else
        if [ -e "$target" ] && ! grep -qx "file $2 .*" <(printf '%s\n' "${made[@]}"); then
            fail "$2 exists and was not installed by this script; move it away first"
        fi
        install -m "$3" "$1" "$target"
        echo "installed $2"
    fi
    remember "file $2 $(sha256sum < "$target" | cut -d' ' -f1)"
}

# The executables are installed stripped (strip --strip-all, from binutils, which Swift's
# toolchain needs): their symbols serve a debugger on the build machine, not the tracker, and are
# more than half of the agent (46.5 MB built, 19.8 MB stripped: docs/raspberry-pi.md, "Footprint").
# The agent's release build is linked for a tracker (Package.swift, trackerRelease): it needs glibc
# 2.36 or later (Debian 12, Raspberry Pi OS 12) for its packed relocations.
# A file that is not ELF (a wrapper script) is installed as it is.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

install_binary() { # SOURCE PATH
    if ! is_elf "$1"; then
        install_file "$1" "$2" 0755
        return
    fi
    local stripped
    stripped="$staging/$(basename "$2")"
    strip --strip-all -o "$stripped" "$1"
    install_file "$stripped" "$2" 0755
    rm -f "$stripped"
}

# An example configuration is installed once; after that it is the operator's, never overwritten.
install_config() { # SOURCE PATH
    if [ -e "$root$2" ]; then
        echo "kept $2 (yours)"
    else
        install -m 0640 -g "$group_id" "$1" "$root$2"
        remember "file $2 $(sha256sum < "$root$2" | cut -d' ' -f1)"
        echo "installed $2 (edit it: device.id at least)"
    fi
}

uninstall() {
    [ -f "$manifest" ] || fail "nothing to uninstall: no manifest $manifest_dir/install-manifest"
    if $talk_to_systemd; then
        for unit in myeline-agent.service myeline-fleet-log.service; do
            if grep -qx "file $unit_dir/$unit .*" "$manifest"; then
                systemctl disable --now "$unit" 2>/dev/null || true
            fi
        done
        # With the agent stopped: its Home Assistant entities and retained OwnTracks location go too
        # (docs/integrations.md). A broker out of reach does not stop the uninstall.
        if [ -x "$bin_dir/myeline-agent" ] && [ -f "$config_dir/agent.yaml" ]; then
            "$bin_dir/myeline-agent" remove-integrations --config "$config_dir/agent.yaml" \
                || echo "kept the integrations' retained messages: the broker did not take their removal (docs/integrations.md)"
        fi
    fi
    local index entry kind path sum
    # Newest first: files before the directories that hold them.
    for ((index = ${#made[@]} - 1; index >= 0; index--)); do
        entry="${made[$index]}"
        kind="${entry%% *}"
        case "$kind" in
            file)
                path="$(echo "$entry" | cut -d' ' -f2)"
                sum="$(echo "$entry" | cut -d' ' -f3)"
                if [ ! -e "$root$path" ]; then
                    continue
                elif [ "$(sha256sum < "$root$path" | cut -d' ' -f1)" = "$sum" ]; then
                    rm -f "$root$path"
                    echo "removed $path"
                else
                    echo "kept $path: changed since it was installed (yours now)"
                fi
                ;;
            dir)
                path="${entry#dir }"
                # The manifest's own directory was made first, so it comes last but for its parents.
                if [ "$path" = "$manifest_dir" ]; then
                    rm -f "$manifest"
                fi
                if rmdir "$root$path" 2>/dev/null; then
                    echo "removed $path/"
                elif [ -d "$root$path" ]; then
                    echo "kept $path/: not empty (remove it yourself if you do not need its contents)"
                fi
                ;;
            user)
                if grep -q "^$user:" "$root/etc/passwd"; then
                    userdel "${prefix_option[@]}" "$user"
                    echo "removed user $user"
                fi
                ;;
            group)
                # userdel may have removed it already (USERGROUPS_ENAB).
                if grep -q "^$user:" "$root/etc/group"; then
                    groupdel "${prefix_option[@]}" "$user"
                    echo "removed group $user"
                fi
                ;;
        esac
    done
    rm -f "$manifest"
    if $talk_to_systemd; then systemctl daemon-reload; fi
}

prefix_option=()
[ -z "$root" ] || prefix_option=(--prefix "$root")

if $uninstall; then
    uninstall
    exit 0
fi

# Check everything before changing anything.
for binary in myeline-agent myeline-aggregator; do
    [ -x "$from/$binary" ] || fail "$from/$binary is not built: swift build -c release --static-swift-stdlib (or --from DIR)"
    if is_elf "$from/$binary" && ! command -v strip > /dev/null; then
        fail "strip is not installed: apt-get install binutils (the binaries are installed without their debugging symbols)"
    fi
done
if $require_gpsd && [ ! -x "$root/usr/sbin/gpsd" ] && [ ! -x "$root/usr/bin/gpsd" ]; then
    fail "gpsd is not installed: apt-get install gpsd gpsd-clients (see docs/raspberry-pi.md), or pass --no-gpsd"
fi
if [ ! -f "$root/etc/passwd" ] || [ ! -f "$root/etc/group" ]; then
    fail "no $root/etc/passwd or $root/etc/group"
fi

# The manifest's directory first, so that an uninstall removes it last.
make_directory "$manifest_dir" 0755

if ! grep -q "^$user:" "$root/etc/group"; then
    groupadd "${prefix_option[@]}" --system "$user"
    remember "group $user"
fi
if ! grep -q "^$user:" "$root/etc/passwd"; then
    useradd "${prefix_option[@]}" --system --gid "$user" --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin --comment "Myeline tracker agent" "$user"
    remember "user $user"
    echo "created system user $user"
fi
user_id="$(grep "^$user:" "$root/etc/passwd" | cut -d: -f3)"
group_id="$(grep "^$user:" "$root/etc/passwd" | cut -d: -f4)"

make_directory "$bin_dir" 0755
make_directory "$doc_dir" 0755
make_directory "$config_dir" 0750 "0:$group_id"
make_directory "$unit_dir" 0755
# systemd's StateDirectory= makes it too; made here so that check-config and a first run by hand work.
make_directory "$state_dir" 0755
chown "$user_id:$group_id" "$root$state_dir"
chmod 0700 "$root$state_dir"

staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
for binary in myeline-agent myeline-aggregator; do
    install_binary "$from/$binary" "$bin_dir/$binary"
done
make_directory "$web_dir" 0755
for page in "$repository"/Sources/AggregatorWeb/Page/*; do
    install_file "$page" "$web_dir/$(basename "$page")" 0644
done
for document in raspberry-pi.md security.md configuration.md broker-connection.md agent.md aggregator.md web.md topics.md; do
    install_file "$repository/docs/$document" "$doc_dir/$document" 0644
done
install_config "$repository/config/agent.example.yaml" "$config_dir/agent.yaml"

units=(myeline-agent.service)
if $with_fleet_log; then
    units+=(myeline-fleet-log.service)
    install_config "$repository/config/aggregator.example.yaml" "$config_dir/aggregator.yaml"
fi
for unit in "${units[@]}"; do
    sed -e "s#/usr/local/bin/#$bin_dir/#g" -e "s#/usr/local/share/doc/myeline/#$doc_dir/#g" \
        "$here/systemd/$unit" > "$staging/$unit"
    install_file "$staging/$unit" "$unit_dir/$unit" 0644
done
if $talk_to_systemd; then systemctl daemon-reload; fi

cat <<EOF

Myeline is installed$([ -z "$root" ] || echo " under $root"). Next:
  1. Edit $config_dir/agent.yaml: device.id, mqtt.broker, mqtt.username and the TLS files.
     Secrets (password file, TLS key) go in $config_dir, owner root, group $user, mode 0640.
  2. Check it:  sudo -u $user $bin_dir/myeline-agent check-config --config $config_dir/agent.yaml
  3. Start it:  systemctl enable --now myeline-agent && journalctl -u myeline-agent -f
Documentation: $doc_dir/raspberry-pi.md
EOF
