<?php

/**
 * Loads the test site (installed by install.php) as a request would: the
 * plugin is loaded by WordPress as an active plugin.
 *
 * @package Narrator
 */

require __DIR__ . '/config.php';
require ABSPATH . 'wp-settings.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
require_once ABSPATH . 'wp-admin/includes/post.php';
require_once __DIR__ . '/class-narrator-fake-server.php';
if (! class_exists('Narrator_Plugin')) {
    fwrite(STDERR, "The plugin is not active.\n");
    exit(1);
}
