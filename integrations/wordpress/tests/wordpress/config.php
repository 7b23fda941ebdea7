<?php

/**
 * The test site's configuration: what /etc/wordpress/config-HOST.php says on
 * a Debian site, pointed at the database tests/wordpress/run.sh starts.
 *
 * @package Narrator
 */

$narrator_socket = getenv('NARRATOR_WP_SOCKET');
if (! $narrator_socket) {
    fwrite(STDERR, "Run tests/wordpress/run.sh: it starts the database these tests need.\n");
    exit(1);
}

define('DB_NAME', 'wordpress');
define('DB_USER', 'wp');
define('DB_PASSWORD', 'wp');
define('DB_HOST', 'localhost:' . $narrator_socket);
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_CONTENT_DIR', getenv('NARRATOR_WP_CONTENT'));
// The end-to-end test serves a copy of WordPress at NARRATOR_WP_HOME.
$narrator_home = getenv('NARRATOR_WP_HOME') ? getenv('NARRATOR_WP_HOME') : 'http://wp.test';
define('WP_HOME', $narrator_home);
define('WP_SITEURL', $narrator_home);
define('ABSPATH', getenv('NARRATOR_WP_ROOT') ? getenv('NARRATOR_WP_ROOT') : '/usr/share/wordpress/');
defined('WP_DEBUG') || define('WP_DEBUG', true);
if (getenv('NARRATOR_WP_LOG')) {
    define('WP_DEBUG_DISPLAY', false);
    define('WP_DEBUG_LOG', getenv('NARRATOR_WP_LOG'));
}
define('DISABLE_WP_CRON', true); // The tests run the events themselves (wp-cron.php, as a system cron would).
define('WP_HTTP_BLOCK_EXTERNAL', true); // Every request is answered by the tests' fake server.
define('WP_ACCESSIBLE_HOSTS', '127.0.0.1,localhost'); // A real Narrator for RealServerTest.
foreach (array('AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT') as $narrator_k) {
    define($narrator_k, 'test-' . $narrator_k);
}
$table_prefix = 'wp_'; // phpcs:ignore
if ('cli' === PHP_SAPI) {
    $_SERVER['HTTP_HOST']   = preg_replace('#^https?://#', '', $narrator_home);
    $_SERVER['SERVER_NAME'] = $_SERVER['HTTP_HOST'];
    $_SERVER['REQUEST_URI'] = '/';
}
