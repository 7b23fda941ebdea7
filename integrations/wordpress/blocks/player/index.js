/* The Narrator player block: rendered on the server, so the editor shows a placeholder. */
( function ( blocks, element, i18n, blockEditor ) {
	var el = element.createElement;
	var __ = i18n.__;
	blocks.registerBlockType( 'narrator/player', {
		edit: function () {
			var props = blockEditor && blockEditor.useBlockProps ? blockEditor.useBlockProps( { className: 'narrator-player-placeholder' } ) : {};
			return el( 'div', props, el( 'p', null, __( 'The Narrator player appears here when the post has audio.', 'narrator' ) ) );
		},
		save: function () {
			return null;
		},
	} );
} )( window.wp.blocks, window.wp.element, window.wp.i18n, window.wp.blockEditor );
