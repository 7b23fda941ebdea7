package worker

// PiperInput is one run of a Piper model.
type PiperInput struct {
	// IDs are the phoneme IDs, given to the model as they are (input [1,len(IDs)]), with
	// input_lengths [len(IDs)].
	IDs []int64
	// NoiseScale, LengthScale and NoiseW are the scales ([noise_scale, length_scale, noise_w]),
	// from the voice's .onnx.json "inference" block.
	NoiseScale, LengthScale, NoiseW float32
	// Speaker is the speaker ID (sid), given only to a multi-speaker model.
	Speaker int64
}

// KokoroInput is one run of a Kokoro model.
type KokoroInput struct {
	// Tokens are given to the model as they are (tokens or input_ids [1,len(Tokens)]): the
	// caller pads them with 0 at both ends.
	Tokens []int64
	// Style is the voice's style row for this many tokens, StyleSize values (style [1,256]).
	Style []float32
	// Speed is the speaking rate, 1 being normal. A model whose speed is int32 gets it rounded
	// to the nearest whole number.
	Speed float32
}
