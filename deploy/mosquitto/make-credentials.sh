#!/usr/bin/env bash
# Makes the credentials of a locked-down Myeline broker (production.conf): a certificate authority,
# the broker's certificate, client certificates and passwords. Needs openssl and mosquitto_passwd
# (Debian: openssl, mosquitto). Keys are written mode 0600 and never printed.
#
#   make-credentials.sh ca DIR                         DIR/ca.crt and DIR/ca.key (10 years)
#   make-credentials.sh server DIR NAME [NAME...]      DIR/server.crt and .key for these host names
#                                                      or IP addresses (2 years), signed by DIR/ca.*
#   make-credentials.sh client DIR NAME                DIR/NAME.crt and .key, common name NAME (the
#                                                      username with use_identity_as_username)
#   make-credentials.sh password FILE NAME OUT         a new random password for NAME: added to (or
#                                                      replaced in) the mosquitto password FILE,
#                                                      and written alone to OUT for the client's
#                                                      mqtt.password-file
#
# NAME is a device id (1-64 of a-z 0-9 . _ -, starting with a letter or digit) or a role of the
# ACL (aggregator, operator, site-NAME); it never contains /, + or #.
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

# Signs DIR/BASE.csr with the CA in DIR into DIR/BASE.crt, with the extensions in FILE.
sign() { # DIR BASE DAYS EXTENSIONS
    if [ ! -f "$1/ca.crt" ] || [ ! -f "$1/ca.key" ]; then
        fail "no CA in $1: make-credentials.sh ca $1 first"
    fi
    openssl x509 -req -in "$1/$2.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -CAcreateserial \
        -days "$3" -extfile "$4" -out "$1/$2.crt" 2>/dev/null
    rm -f "$1/$2.csr"
    chmod 0644 "$1/$2.crt"
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
        echo "made $1/ca.crt (give it to every client) and $1/ca.key (keep it offline)"
        ;;
    server)
        [ $# -ge 2 ] || usage
        directory="$1"
        shift
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
        readable_by_broker "$directory/server.key"
        echo "made $directory/server.crt and $directory/server.key for $*"
        ;;
    client)
        [ $# -eq 2 ] || usage
        check_name "$2"
        extensions="$(mktemp)"
        trap 'rm -f "$extensions"' EXIT
        printf 'extendedKeyUsage=clientAuth\n' > "$extensions"
        openssl req -new "${key_options[@]}" -keyout "$1/$2.key" -out "$1/$2.csr" -subj "/CN=$2" 2>/dev/null
        sign "$1" "$2" 730 "$extensions"
        echo "made $1/$2.crt and $1/$2.key (mqtt.tls.cert-file and mqtt.tls.key-file of $2)"
        ;;
    password)
        [ $# -eq 3 ] || usage
        check_name "$2"
        password="$(openssl rand -base64 24)"
        # mosquitto_passwd -U hashes a file of name:password lines in place, so that the password
        # never appears on a command line (where ps would show it).
        plain="$(mktemp)"
        trap 'rm -f "$plain"' EXIT
        printf '%s:%s\n' "$2" "$password" > "$plain"
        mosquitto_passwd -U "$plain"
        touch "$1"
        { grep -v "^$2:" "$1" || true; cat "$plain"; } > "$1.new"
        mv "$1.new" "$1"
        readable_by_broker "$1"
        printf '%s\n' "$password" > "$3"
        echo "set the password of $2 in $1; wrote it to $3 (copy it to the client, mode 0600)"
        ;;
    *) usage ;;
esac
