<?php

/**
 * The player: a block, the [narrator] shortcode and automatic placement,
 * all printing Narrator's embed markup.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * Prints the player for readers allowed to hear the post.
 */
class Narrator_Player
{
    /** Where themes print the post's content: classic themes and the Post Content block. */
    public const ARTICLE_SELECTOR = '.entry-content, .wp-block-post-content';

    /** True while the body sent to Narrator is rendered: no player then. */
    public static $suspended = false;

    /**
     * Hooks.
     */
    public static function init()
    {
        add_action('init', array(__CLASS__, 'register'));
        add_filter('the_content', array(__CLASS__, 'place'), 20);
        add_filter('narrator_visitor_can_listen', array(__CLASS__, 'default_can_listen'), 1, 2);
        add_action('template_redirect', array(__CLASS__, 'no_cache'));
    }

    /**
     * A page that carries a token is for its visitor only: no shared cache.
     */
    public static function no_cache()
    {
        if (is_singular() && Narrator_Plugin::signed() && '' !== (string) get_post_meta(get_queried_object_id(), '_narrator_audio_id', true)) {
            nocache_headers();
        }
    }

    /**
     * Registers the block and the shortcode.
     */
    public static function register()
    {
        add_shortcode('narrator', array(__CLASS__, 'shortcode'));
        register_block_type(
            NARRATOR_DIR . '/blocks/player',
            array('render_callback' => array(__CLASS__, 'render_block'))
        );
    }

    /**
     * The block's server-side render.
     *
     * @return string
     */
    public static function render_block()
    {
        $post = get_post();
        return $post ? self::markup($post) : '';
    }

    /**
     * The [narrator] shortcode.
     *
     * @return string
     */
    public static function shortcode()
    {
        $post = get_post();
        return $post ? self::markup($post) : '';
    }

    /**
     * Automatic placement before or after the content of a single post.
     *
     * @param string $content The content.
     * @return string
     */
    public static function place($content)
    {
        if (self::$suspended || ! is_singular() || ! in_the_loop() || ! is_main_query()) {
            return $content;
        }
        $post      = get_post();
        $placement = Narrator_Plugin::settings()['placement'];
        if (! $post || 'manual' === $placement || ! Narrator_Plugin::type_enabled($post->post_type)) {
            return $content;
        }
        if (has_block('narrator/player', $post) || has_shortcode($post->post_content, 'narrator')) {
            return $content;
        }
        $player = self::markup($post);
        return 'before' === $placement ? $player . $content : $content . $player;
    }

    /**
     * The default rule: published posts for everyone, private posts for
     * users who may read them, password-protected posts once the password
     * was given; nothing before the post is published.
     *
     * @param bool    $can  The value so far.
     * @param WP_Post $post The post.
     * @return bool
     */
    public static function default_can_listen($can, $post)
    {
        if (post_password_required($post)) {
            return false;
        }
        switch (get_post_status($post)) {
            case 'publish':
                return true;
            case 'private':
                return current_user_can('read_post', $post->ID);
            default:
                return false;
        }
    }

    /**
     * The embed markup for a post, or '' when there is nothing this visitor
     * may hear.
     *
     * @param WP_Post $post The post.
     * @return string
     */
    public static function markup($post)
    {
        if (self::$suspended || ! Narrator_Plugin::configured()) {
            return '';
        }
        if ('' === (string) get_post_meta($post->ID, '_narrator_audio_id', true) || get_post_meta($post->ID, '_narrator_disabled', true)) {
            return '';
        }
        /**
         * Filters whether the current visitor may listen to a post. Membership
         * plugins hook it; in a signed project it decides who gets a token.
         *
         * @param bool    $can     Whether the visitor may listen.
         * @param WP_Post $post    The post.
         * @param int     $user_id The visitor (0 when not logged in).
         */
        if (! apply_filters('narrator_visitor_can_listen', false, $post, get_current_user_id())) {
            return '';
        }
        $restricted = '' !== $post->post_password || 'private' === get_post_status($post);
        $signed     = Narrator_Plugin::signed();
        if ($restricted && ! $signed) {
            return ''; // Kept as a draft in a public project: nobody hears it.
        }
        $s     = Narrator_Plugin::settings();
        $xid   = Narrator_Plugin::external_id($post->ID);
        $attrs = array(
            'src'              => untrailingslashit($s['url']) . '/embed.js',
            'data-project'     => (string) (int) $s['project_id'],
            'data-external-id' => $xid,
            'data-title'       => wp_strip_all_tags(get_the_title($post)),
        );
        /**
         * Filters the CSS selector of the element holding the post's text,
         * where the player highlights the sentence being read; '' turns
         * the read-along off. The loader takes the match around the player
         * first, else the first in the page.
         *
         * @param string  $selector The selector.
         * @param WP_Post $post     The post.
         */
        $selector = (string) apply_filters('narrator_article_selector', self::ARTICLE_SELECTOR, $post);
        if ('' !== $selector) {
            $attrs['data-readalong'] = '';
            $attrs['data-article']   = $selector;
        }
        if ($signed) {
            /**
             * Filters how long a player token is valid, in seconds.
             *
             * @param int     $ttl  Seconds (an hour by default).
             * @param WP_Post $post The post.
             */
            $ttl                 = (int) apply_filters('narrator_token_ttl', HOUR_IN_SECONDS, $post);
            $attrs['data-token'] = Narrator_Signer::embed_token(
                get_option('narrator_signing_secret', ''),
                (int) $s['project_id'],
                time() + max(60, $ttl),
                'external_id:' . $xid
            );
        }
        $html = '<div class="narrator-player">' . self::script($attrs) . '</div>';
        /**
         * Filters the player markup.
         *
         * @param string  $html  The markup.
         * @param WP_Post $post  The post.
         * @param array   $attrs The embed script's attributes.
         */
        return (string) apply_filters('narrator_player_html', $html, $post, $attrs);
    }

    /**
     * A script tag with escaped attributes.
     *
     * @param array $attrs Attributes.
     * @return string
     */
    private static function script(array $attrs)
    {
        $out = '<script';
        foreach ($attrs as $name => $value) {
            $out .= ' ' . $name . '="' . ('src' === $name ? esc_url($value) : esc_attr($value)) . '"';
        }
        return $out . ' async></script>';
    }
}
