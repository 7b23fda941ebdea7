<?php

/**
 * The router of `php -S` for the end-to-end test (cmd/narrator/
 * wordpress_e2e_test.go), whose document root is a copy of WordPress:
 * files are served as they are, every other path (pretty permalinks,
 * /wp-json/) goes to index.php, as Apache's rewrite rules would.
 *
 * @package Narrator
 */

$narrator_path = (string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH); // phpcs:ignore
$narrator_file = $_SERVER['DOCUMENT_ROOT'] . $narrator_path;
if ('/' !== $narrator_path && file_exists($narrator_file) && ! is_dir($narrator_file)) {
    return false;
}
if (is_dir($narrator_file) && file_exists(rtrim($narrator_file, '/') . '/index.php')) {
    $_SERVER['SCRIPT_NAME'] = rtrim($narrator_path, '/') . '/index.php';
    require rtrim($narrator_file, '/') . '/index.php';
    return;
}
$_SERVER['SCRIPT_NAME'] = '/index.php';
require $_SERVER['DOCUMENT_ROOT'] . '/index.php';
