package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

// TestSpeechVoice checks how a speech request's voice is found: by ID, by
// name in the project's language then in any, and OpenAI's names by the
// documented rule.
func TestSpeechVoice(t *testing.T) {
	t.Parallel()
	cat := narrator.BuiltinCatalog()
	tests := []struct {
		name, language, voice string
		want                  string // SpeechVoiceID, "" for none
	}{
		{"id", "de_DE", "en_US/Sally", "en_US/Sally"},
		{"id of another language's name", "en_US", "de_DE/Anna", "de_DE/Anna"},
		{"name in the language", "en_GB", "alan", "en_GB/Alan"},
		{"label", "en_US", "Kevin (Male)", "en_US/Kevin"},
		{"name in another language", "en_US", "Anna", "de_DE/Anna"},
		{"unknown id", "en_US", "en_US/Nobody", ""},
		{"unknown", "en_US", "nobody", ""},
		{"empty", "en_US", " ", ""},
		{"alloy: the first female, the default body voice", "en_US", "alloy", "en_US/Sally"},
		{"coral: the second female", "en_US", "coral", "en_US/Emma"},
		{"nova: the third female", "en_US", "nova", "en_US/Susan"},
		{"sage wraps round", "en_US", "sage", "en_US/Sally"},
		{"shimmer", "en_US", "Shimmer", "en_US/Emma"},
		{"ash: the first male, the default title voice", "en_US", "ash", "en_US/Richard"},
		{"echo", "en_US", "echo", "en_US/Kevin"},
		{"fable", "en_US", "fable", "en_US/Mark"},
		{"onyx wraps round", "en_US", "onyx", "en_US/Richard"},
		{"ballad", "en_US", "ballad", "en_US/Kevin"},
		{"marin", "en_US", "marin", "en_US/Susan"},
		{"alias in another language", "de_DE", "alloy", "de_DE/Anna"},
		{"alias, male, in another language", "de_DE", "onyx", "de_DE/Lukas"},
		{"alias, unknown language", "xx_XX", "alloy", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, ok := cat.SpeechVoice(tt.language, tt.voice)
			got := ""
			if ok {
				got = narrator.SpeechVoiceID(v)
			}
			if got != tt.want {
				t.Errorf("SpeechVoice(%q, %q) = %q, want %q", tt.language, tt.voice, got, tt.want)
			}
		})
	}
}
