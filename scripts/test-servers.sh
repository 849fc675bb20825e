#!/usr/bin/env bash
# Installs the real servers the connector tests and `bench:connectors` start on
# loopback, from Debian's packages. Idempotent: does nothing when they are
# already there.
set -euo pipefail
need=()
# Each line: a binary the tests look for, and the Debian package that has it.
while read -r bin pkg; do
  [ -z "$bin" ] && continue
  [ -x "$bin" ] || need+=("$pkg")
done <<'LIST'
/usr/sbin/dovecot dovecot-imapd
/usr/bin/chromium chromium
/usr/sbin/sshd openssh-server
/usr/bin/sftp openssh-client
/usr/sbin/vsftpd vsftpd
/usr/bin/curl curl
LIST
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test servers: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Debian starts packaged daemons on install; the tests start their own on other ports.
  for svc in dovecot ssh vsftpd; do (service "$svc" stop >/dev/null 2>&1 || true); done
fi
