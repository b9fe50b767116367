#!/usr/bin/env bash
# Makes the credentials of a locked-down Myeline broker (production.conf): a certificate authority,
# the broker's certificate, client certificates and their revocation, passwords, and the ACL blocks
# of boards, operators and site brokers. Needs openssl and mosquitto_passwd (Debian: openssl,
# mosquitto). Keys are written mode 0600 and never printed. production.conf's header says where
# each step runs: the CA's steps on the machine that keeps the CA, never on the broker.
#
# On the machine that keeps the CA (CA is a directory there, made mode 0700):
#   make-credentials.sh ca CA                          CA/ca.crt, CA/ca.key (10 years) and an
#                                                      empty revocation list CA/crl.pem
#   make-credentials.sh server CA NAME [NAME...]       CA/server.crt and .key for these host names
#                                                      or IP addresses (2 years)
#   make-credentials.sh client CA NAME                 CA/NAME.crt and .key, common name NAME (the
#                                                      username with use_identity_as_username)
#   make-credentials.sh revoke CA NAME                 revokes CA/NAME.crt: a new CA/crl.pem, to
#                                                      copy to the broker (production.conf)
#
# On the broker (DIR is /etc/mosquitto/myeline, holding passwords and acl; OUT is a new file
# holding the password alone, for the client's mqtt.password-file):
#   make-credentials.sh password FILE NAME OUT         a new random password for NAME (a device):
#                                                      added to (or replaced in) the mosquitto
#                                                      password FILE, and written alone to OUT
#   make-credentials.sh board DIR NAME OUT             an account for one board or viewer (reads
#                                                      the fleet): its password, and its block in
#                                                      DIR/acl (replacing one of the same name)
#   make-credentials.sh operator DIR NAME OUT          an account for one operator (commands)
#   make-credentials.sh site DIR NAME OUT DEVICE...    a site broker's account (bridge.conf), that
#                                                      may relay these devices only
#
# NAME is a device id (1-64 of a-z 0-9 . _ -, starting with a letter or digit) or an account of
# the ACL; it never contains /, + or #. Each board, operator and site has an account of its own:
# production.conf binds a client id to its username, so two clients of one account would take
# each other's connection over. Reload the broker after a change (systemctl reload mosquitto).
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 64
}

fail() {
    echo "make-credentials.sh: $*" >&2
    exit 1
}

check_name() {
    [[ "$1" =~ ^[a-z0-9][a-z0-9._-]{0,63}$ ]] ||
        fail "invalid name \"$1\": use 1-64 characters a-z, 0-9, '.', '_' or '-', starting with a letter or digit"
}

# The broker reads its key and the password file as the user mosquitto (Debian's package).
readable_by_broker() { # FILE
    if getent group mosquitto > /dev/null; then
        chgrp mosquitto "$1"
        chmod 0640 "$1"
    fi
}

key_options=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

require_ca() { # CA
    if [ ! -f "$1/ca.crt" ] || [ ! -f "$1/ca.key" ]; then
        fail "no CA in $1: make-credentials.sh ca $1 first, on the machine that keeps the CA"
    fi
}

# Signs CA/BASE.csr with the CA in CA into CA/BASE.crt, with the extensions in FILE.
sign() { # CA BASE DAYS EXTENSIONS
    require_ca "$1"
    openssl x509 -req -in "$1/$2.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -CAcreateserial \
        -days "$3" -extfile "$4" -out "$1/$2.crt" 2>/dev/null
    rm -f "$1/$2.csr"
    chmod 0644 "$1/$2.crt"
}

# Runs `openssl ca ARGUMENTS` over the CA's revocation database (CA/index.txt, CA/crlnumber).
# Revocation lists are valid as long as the CA: an expired list would make the broker refuse
# every client certificate, and the broker is the only party that reads it.
revocation() { # CA ARGUMENTS...
    local directory="$1" configuration
    shift
    configuration="$(mktemp)"
    printf '[ca]\ndefault_ca = fleet\n[fleet]\ndatabase = %s/index.txt\ncrlnumber = %s/crlnumber\ndefault_md = sha256\ndefault_crl_days = 3650\n' \
        "$directory" "$directory" > "$configuration"
    openssl ca -config "$configuration" -keyfile "$directory/ca.key" -cert "$directory/ca.crt" "$@" 2>/dev/null ||
        { rm -f "$configuration"; fail "openssl ca $* failed in $directory"; }
    rm -f "$configuration"
}

new_crl() { # CA
    revocation "$1" -gencrl -out "$1/crl.pem"
    chmod 0644 "$1/crl.pem"
}

# Sets a new random password for NAME in FILE and writes it alone to OUT.
set_password() { # FILE NAME OUT
    local password plain
    password="$(openssl rand -base64 24)"
    # mosquitto_passwd -U hashes a file of name:password lines in place, so that the password
    # never appears on a command line (where ps would show it).
    plain="$(mktemp)"
    printf '%s:%s\n' "$2" "$password" > "$plain"
    mosquitto_passwd -U "$plain"
    touch "$1"
    { grep -v "^$2:" "$1" || true; cat "$plain"; } > "$1.new"
    rm -f "$plain"
    mv "$1.new" "$1"
    readable_by_broker "$1"
    printf '%s\n' "$password" > "$3"
}

# The lines every account of a role starts with: the device patterns of the ACL apply to every
# username, so they are denied here for NAME, which must never be a device (or OwnTracks device).
role_denials() { # NAME
    printf 'topic deny myeline/%s/#\n' "$1"
    printf 'topic deny owntracks/myeline/%s\n' "$1"
    printf 'topic deny owntracks/myeline/%s/cmd\n' "$1"
    printf 'topic deny homeassistant/device_tracker/%s/#\n' "$1"
    printf 'topic deny homeassistant/sensor/%s/#\n' "$1"
}

# The ACL block of an account: ROLE is board, operator or site (then with its devices).
acl_block() { # ROLE NAME [DEVICE...]
    local role="$1" name="$2" device
    shift 2
    case "$role" in
        board)
            echo "# A board or viewer (myeline-aggregator, the fleet log, a dashboard): reads the fleet, writes"
            echo "# its own sync topic only, reads the broker's retained-message count (docs/aggregator.md)."
            echo "user $name"
            role_denials "$name"
            echo "topic read myeline/#"
            echo "topic readwrite myeline-aggregator/sync/#"
            echo "topic read \$SYS/broker/retained messages/count"
            echo "topic read owntracks/+/+"
            ;;
        operator)
            echo "# An operator (myeline-agent start|stop|pause|resume|report, dispatch tools): sends"
            echo "# commands to any device and reads the fleet, with the command results."
            echo "user $name"
            role_denials "$name"
            echo "topic read myeline/#"
            echo "topic write myeline/+/cmd"
            echo "topic write owntracks/myeline/+/cmd"
            ;;
        site)
            echo "# A site broker (bridge.conf): relays the data of its own devices and their commands."
            echo "user $name"
            role_denials "$name"
            for device in "$@"; do
                echo "topic write myeline/$device/status"
                echo "topic write myeline/$device/activities/+"
                echo "topic write myeline/$device/activities/+/track"
                echo "topic write myeline/$device/cmd/result"
                echo "topic read myeline/$device/cmd"
            done
            ;;
    esac
}

# Writes NAME's block into the ACL FILE, in place of the block (the paragraph) holding "user NAME".
set_acl_block() { # FILE ROLE NAME [DEVICE...]
    local file="$1"
    shift
    [ -f "$file" ] || fail "no ACL $file: install deploy/mosquitto/acl there first (production.conf)"
    {
        awk -v user="user $2" 'BEGIN { RS = ""; ORS = "\n\n" } { keep = 1; n = split($0, lines, "\n");
            for (i = 1; i <= n; i++) if (lines[i] == user) keep = 0; if (keep) print }' "$file"
        acl_block "$@"
    } > "$file.new"
    chmod --reference="$file" "$file.new"
    mv "$file.new" "$file"
}

role_account() { # ROLE DIR NAME OUT [DEVICE...]
    local role="$1" directory="$2" name="$3" out="$4"
    shift 4
    check_name "$name"
    for device in "$@"; do check_name "$device"; done
    set_acl_block "$directory/acl" "$role" "$name" "$@"
    set_password "$directory/passwords" "$name" "$out"
    echo "set the password of $name ($role) in $directory/passwords and its block in $directory/acl; wrote the password to $out (copy it to the client, mode 0600); reload the broker"
}

command="${1:-}"
[ $# -gt 0 ] && shift
umask 077
case "$command" in
    ca)
        [ $# -eq 1 ] || usage
        mkdir -p "$1"
        [ ! -e "$1/ca.key" ] || fail "$1/ca.key exists already; remove it to make a new CA (every certificate must then be remade)"
        openssl req -x509 "${key_options[@]}" -keyout "$1/ca.key" -out "$1/ca.crt" -days 3650 \
            -subj "/CN=Myeline fleet CA" -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
        chmod 0644 "$1/ca.crt"
        : > "$1/index.txt"
        echo 1000 > "$1/crlnumber"
        new_crl "$1"
        echo "made $1/ca.crt (give it to every client and the broker), $1/crl.pem (for the broker) and $1/ca.key (keep it here, never on the broker)"
        ;;
    server)
        [ $# -ge 2 ] || usage
        directory="$1"
        shift
        require_ca "$directory"
        names=()
        for name in "$@"; do
            if [[ "$name" =~ ^[0-9.]+$ || "$name" == *:* ]]; then names+=("IP:$name"); else names+=("DNS:$name"); fi
        done
        extensions="$(mktemp)"
        trap 'rm -f "$extensions"' EXIT
        printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$(IFS=,; echo "${names[*]}")" > "$extensions"
        openssl req -new "${key_options[@]}" -keyout "$directory/server.key" -out "$directory/server.csr" \
            -subj "/CN=$1" 2>/dev/null
        sign "$directory" server 730 "$extensions"
        echo "made $directory/server.crt and $directory/server.key for $* (copy both to the broker)"
        ;;
    client)
        [ $# -eq 2 ] || usage
        check_name "$2"
        require_ca "$1"
        extensions="$(mktemp)"
        trap 'rm -f "$extensions"' EXIT
        printf 'extendedKeyUsage=clientAuth\n' > "$extensions"
        openssl req -new "${key_options[@]}" -keyout "$1/$2.key" -out "$1/$2.csr" -subj "/CN=$2" 2>/dev/null
        sign "$1" "$2" 730 "$extensions"
        echo "made $1/$2.crt and $1/$2.key (mqtt.tls.cert-file and mqtt.tls.key-file of $2)"
        ;;
    revoke)
        [ $# -eq 2 ] || usage
        check_name "$2"
        require_ca "$1"
        [ -f "$1/$2.crt" ] || fail "no certificate $1/$2.crt to revoke"
        [ -f "$1/index.txt" ] || { : > "$1/index.txt"; echo 1000 > "$1/crlnumber"; }
        revocation "$1" -revoke "$1/$2.crt"
        new_crl "$1"
        echo "revoked $1/$2.crt: copy $1/crl.pem to the broker's crlfile and reload it (production.conf)"
        ;;
    password)
        [ $# -eq 3 ] || usage
        check_name "$2"
        set_password "$1" "$2" "$3"
        echo "set the password of $2 in $1; wrote it to $3 (copy it to the client, mode 0600)"
        ;;
    board | operator)
        [ $# -eq 3 ] || usage
        role_account "$command" "$@"
        ;;
    site)
        [ $# -ge 4 ] || usage
        role_account site "$@"
        ;;
    *) usage ;;
esac
