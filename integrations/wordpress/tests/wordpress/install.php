<?php

/**
 * Installs the test site with WordPress's own wp_install(), as the browser
 * installer would, and activates the plugin from the checkout.
 *
 * @package Narrator
 */

define('WP_DEBUG', false); // WordPress 6.1's own deprecations under PHP 8.2 are not ours.
require __DIR__ . '/config.php';
define('WP_INSTALLING', true);
require ABSPATH . 'wp-settings.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
if (! is_blog_installed()) {
    wp_install('Narrator test', 'admin', 'admin@wp.test', true, '', 'admin-password');
}
update_option('permalink_structure', '/%year%/%monthnum%/%postname%/');
$narrator_result = activate_plugin('narrator/narrator.php');
if (is_wp_error($narrator_result)) {
    fwrite(STDERR, 'activate_plugin: ' . $narrator_result->get_error_message() . "\n");
    exit(1);
}
echo 'WordPress ' . get_bloginfo('version') . " installed; plugins: " . implode(', ', get_option('active_plugins')) . "\n";
