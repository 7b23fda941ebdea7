<?php

/**
 * Moves the clock of the plugin's WP-Cron events forward for the
 * end-to-end test: every event of the plugin due within the seconds given
 * as the first argument becomes due now (a retry's backoff, the minute's
 * tick, a bulk batch's spacing), so that the next request of wp-cron.php
 * runs it. Prints how many it moved.
 *
 * @package Narrator
 */

require __DIR__ . '/config.php';
require ABSPATH . 'wp-settings.php';

$narrator_ahead = isset($argv[1]) ? (int) $argv[1] : 3600;
$narrator_moved = 0;
$narrator_crons = _get_cron_array();
$narrator_now   = time();
foreach ($narrator_crons as $narrator_time => $narrator_hooks) {
    if ($narrator_time <= $narrator_now || $narrator_time > $narrator_now + $narrator_ahead) {
        continue;
    }
    foreach ($narrator_hooks as $narrator_hook => $narrator_events) {
        if (0 !== strpos($narrator_hook, 'narrator_')) {
            continue;
        }
        foreach ($narrator_events as $narrator_key => $narrator_event) {
            unset($narrator_crons[$narrator_time][$narrator_hook][$narrator_key]);
            $narrator_crons[$narrator_now - 1][$narrator_hook][$narrator_key] = $narrator_event;
            ++$narrator_moved;
        }
    }
}
ksort($narrator_crons);
_set_cron_array(array_filter(array_map('array_filter', $narrator_crons)));
echo $narrator_moved . "\n";
