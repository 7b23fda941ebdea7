<?php

/**
 * Loads the plugin's pure classes without WordPress, with the few WordPress
 * functions they call stubbed.
 *
 * @package Narrator
 */

define('ABSPATH', __DIR__ . '/');

if (! function_exists('__')) {
    function __($text, $domain = 'default') // phpcs:ignore
    {
        return $text;
    }
}

require_once dirname(__DIR__) . '/includes/class-narrator-signer.php';
require_once dirname(__DIR__) . '/includes/class-narrator-mapping.php';
