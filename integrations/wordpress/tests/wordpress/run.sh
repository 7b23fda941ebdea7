#!/usr/bin/env bash
# Runs the plugin's tests against a real WordPress: Debian's wordpress package
# (/usr/share/wordpress), a throwaway MariaDB in a temporary directory (no
# network, its own socket), and a site installed by WordPress's own
# wp_install(). Arguments go to phpunit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

user=(--user="$(id -un)")
mkdir -p "$tmp/db" "$tmp/content/plugins" "$tmp/content/uploads"
mariadb-install-db --no-defaults "${user[@]}" --datadir="$tmp/db" --skip-test-db \
  --auth-root-authentication-method=normal >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; exit 1; }
cat >"$tmp/init.sql" <<'SQL'
CREATE DATABASE IF NOT EXISTS wordpress;
CREATE USER IF NOT EXISTS 'wp'@'localhost' IDENTIFIED BY 'wp';
GRANT ALL ON wordpress.* TO 'wp'@'localhost';
SQL
mariadbd --no-defaults "${user[@]}" --datadir="$tmp/db" --socket="$tmp/mysql.sock" \
  --skip-networking --pid-file="$tmp/mysql.pid" --init-file="$tmp/init.sql" \
  --innodb-buffer-pool-size=32M --log-error="$tmp/mysql.err" 2>>"$tmp/mysql.err" &
pid=$!
for _ in $(seq 1 100); do
  [[ -S $tmp/mysql.sock ]] && mariadb --no-defaults -S "$tmp/mysql.sock" -uwp -pwp -e 'select 1' wordpress >/dev/null 2>&1 && break
  sleep 0.2
done
ln -s /usr/share/wordpress/wp-content/themes "$tmp/content/themes"
ln -s "$plugin" "$tmp/content/plugins/narrator"

export NARRATOR_WP_SOCKET=$tmp/mysql.sock NARRATOR_WP_CONTENT=$tmp/content
cd "$plugin"
php tests/wordpress/install.php 2> >(grep -v "sendmail: not found" >&2)
phpunit -c tests/wordpress/phpunit.xml "$@"
