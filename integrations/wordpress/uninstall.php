<?php

/**
 * Uninstall: removes the plugin's options, post meta and pending events on
 * every site, and this site's webhook endpoint from the project (best
 * effort).
 *
 * @package Narrator
 */

defined('WP_UNINSTALL_PLUGIN') || exit;

require_once __DIR__ . '/narrator.php';

/**
 * Removes the plugin's data from the current site.
 */
function narrator_uninstall_site()
{
    $hook = (int) get_option('narrator_webhook_id', 0);
    if ($hook && Narrator_Plugin::configured()) {
        $pid = (int) Narrator_Plugin::settings()['project_id'];
        Narrator_Client::from_settings()->request('DELETE', Narrator_Client::project_path($pid, '/webhooks/' . $hook), null, 5);
    }
    foreach (Narrator_Plugin::OPTIONS as $option) {
        delete_option($option);
    }
    delete_transient('narrator_projects');
    foreach (Narrator_Plugin::META as $key) {
        delete_post_meta_by_key($key);
    }
    foreach (array('narrator_tick', 'narrator_sync', 'narrator_delete') as $hook) {
        wp_unschedule_hook($hook);
    }
    global $wpdb;
    $locks = $wpdb->get_col($wpdb->prepare("SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE %s", $wpdb->esc_like('narrator_lock_') . '%')); // phpcs:ignore
    foreach ($locks as $lock) {
        delete_option($lock);
    }
}

if (is_multisite()) {
    foreach (get_sites(array('fields' => 'ids', 'number' => 0)) as $narrator_blog) {
        switch_to_blog($narrator_blog);
        narrator_uninstall_site();
        restore_current_blog();
    }
    delete_site_option('narrator_site_key');
} else {
    narrator_uninstall_site();
    delete_option('narrator_site_key');
}
