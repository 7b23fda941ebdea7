package narrator

// AudioUpdate holds the fields of an update to an audio; a nil field means
// "keep the stored value". Metadata is replaced as a whole, and only when
// MetadataSet is true, so that "metadata omitted" (keep) differs from
// "metadata: {}" (clear).
type AudioUpdate struct {
	Title      *string
	Body       *string
	Author     *string
	ArticleURL *string
	// ExternalID, when set to "", removes the audio's external ID.
	ExternalID *string
	// Metadata replaces the stored metadata when MetadataSet is true; a nil
	// map then clears it.
	Metadata    map[string]string
	MetadataSet bool
}
