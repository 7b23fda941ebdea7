<?php

/**
 * Plugin Name:       Narrator
 * Plugin URI:        https://github.com/narrator/narrator/tree/main/integrations/wordpress
 * Description:       Turns posts into audio with a Narrator server and puts its player on the post: by block, shortcode or automatically.
 * Version:           0.1.0
 * Requires at least: 6.1
 * Requires PHP:      7.4
 * Author:            The Narrator authors
 * License:           GPL-2.0-or-later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       narrator
 * Domain Path:       /languages
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

define('NARRATOR_VERSION', '0.1.0');
define('NARRATOR_FILE', __FILE__);
define('NARRATOR_DIR', __DIR__);

require_once __DIR__ . '/includes/class-narrator-signer.php';
require_once __DIR__ . '/includes/class-narrator-mapping.php';
require_once __DIR__ . '/includes/class-narrator-client.php';
require_once __DIR__ . '/includes/class-narrator-plugin.php';
require_once __DIR__ . '/includes/class-narrator-sync.php';
require_once __DIR__ . '/includes/class-narrator-player.php';
require_once __DIR__ . '/includes/class-narrator-webhooks.php';
require_once __DIR__ . '/includes/class-narrator-admin.php';

register_activation_hook(__FILE__, array('Narrator_Plugin', 'activate'));
register_deactivation_hook(__FILE__, array('Narrator_Plugin', 'deactivate'));

Narrator_Plugin::init();
