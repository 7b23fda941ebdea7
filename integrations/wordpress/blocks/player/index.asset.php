<?php

return array(
    'dependencies' => array('wp-blocks', 'wp-element', 'wp-i18n', 'wp-block-editor'),
    'version'      => '0.1.0',
);
