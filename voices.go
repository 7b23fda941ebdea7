package narrator

// Voice engines.
const (
	EngineFestival = "festival"
	EngineFlite    = "flite"
	EngineEspeak   = "espeak"
	// EnginePiper and EngineKokoro are the neural engines: their voices are not built in but
	// installed by the operator (InstalledVoice), and run with onnxruntime.
	EnginePiper  = "piper"
	EngineKokoro = "kokoro"
)

// Neural reports whether engine is a neural engine, whose voices the operator installs.
func Neural(engine string) bool { return engine == EnginePiper || engine == EngineKokoro }

// Voice genders, as the v3 API shows them in a voice label.
const (
	GenderFemale = "Female"
	GenderMale   = "Male"
)

// Voice is one entry of the voice catalog: a friendly name and gender, the language it speaks,
// and the engine voice that speaks it.
type Voice struct {
	Name        string // friendly name, unique within its language, e.g. "Sally"
	Gender      string // GenderFemale or GenderMale
	Language    string // locale, e.g. "en_US"
	Engine      string // EngineFestival, EngineFlite, EngineEspeak, EnginePiper or EngineKokoro
	EngineVoice string // the engine's own voice name, e.g. "cmu_us_slt_arctic_hts", "slt", "de+f3"; an installed voice's ID
	Quality     string // a neural voice's quality: "x_low", "low", "medium" or "high"; "" for built-in voices
	License     string // a neural voice's licence, from its model card; "" if not given or built in
	// Build names an installed voice's files (a digest of their SHA-256s and its speaker), so
	// that what was made with the voice is made again when they change under the same ID;
	// "" for built-in voices.
	Build string
}

// Label returns the voice as the v3 API shows it in a project's title_voice and body_voice:
// "Name (Gender)", e.g. "Sally (Female)".
func (v Voice) Label() string { return v.Name + " (" + v.Gender + ")" }

// catalog is the voice catalog, sorted by language, then name. It is never modified.
//
// English uses festival's HTS voice and flite's voices, the most intelligible on the machine
// (pocketsphinx word accuracy on a news sample: HTS 0.91, flite rms and kal16 0.92, slt and awb
// 0.80), with espeak-ng's English (0.25–0.50) as a fallback. Every other language uses
// espeak-ng: its language voice, which is male, and the "+f5" female variant. f5 was the clearest
// female variant on English (0.50; f2 0.37, f1 0.22, f4 0.14, f3 0.03), and the plain voice
// the clearest male one (0.25; m1 and m3 0.24, m4 and m7 0.19, m2 0.07).
var catalog = [...]Voice{
	{"Jan", GenderMale, "cs_CZ", EngineEspeak, "cs", "", "", ""},
	{"Tereza", GenderFemale, "cs_CZ", EngineEspeak, "cs+f5", "", "", ""},
	{"Freja", GenderFemale, "da_DK", EngineEspeak, "da+f5", "", "", ""},
	{"Mads", GenderMale, "da_DK", EngineEspeak, "da", "", "", ""},
	{"Anna", GenderFemale, "de_DE", EngineEspeak, "de+f5", "", "", ""},
	{"Lukas", GenderMale, "de_DE", EngineEspeak, "de", "", "", ""},
	{"Eleni", GenderFemale, "el_GR", EngineEspeak, "el+f5", "", "", ""},
	{"Nikos", GenderMale, "el_GR", EngineEspeak, "el", "", "", ""},
	{"Alan", GenderMale, "en_GB", EngineFlite, "awb", "", "", ""},
	{"Oliver", GenderMale, "en_GB", EngineEspeak, "en-gb", "", "", ""},
	{"Olivia", GenderFemale, "en_GB", EngineEspeak, "en-gb+f5", "", "", ""},
	{"Emma", GenderFemale, "en_US", EngineEspeak, "en-us+f5", "", "", ""},
	{"Kevin", GenderMale, "en_US", EngineFlite, "kal16", "", "", ""},
	{"Mark", GenderMale, "en_US", EngineEspeak, "en-us", "", "", ""},
	{"Richard", GenderMale, "en_US", EngineFlite, "rms", "", "", ""},
	{"Sally", GenderFemale, "en_US", EngineFestival, "cmu_us_slt_arctic_hts", "", "", ""},
	{"Susan", GenderFemale, "en_US", EngineFlite, "slt", "", "", ""},
	{"Lucia", GenderFemale, "es_ES", EngineEspeak, "es+f5", "", "", ""},
	{"Pablo", GenderMale, "es_ES", EngineEspeak, "es", "", "", ""},
	{"Diego", GenderMale, "es_MX", EngineEspeak, "es-419", "", "", ""},
	{"Sofia", GenderFemale, "es_MX", EngineEspeak, "es-419+f5", "", "", ""},
	{"Aino", GenderFemale, "fi_FI", EngineEspeak, "fi+f5", "", "", ""},
	{"Mikko", GenderMale, "fi_FI", EngineEspeak, "fi", "", "", ""},
	{"Julie", GenderFemale, "fr_FR", EngineEspeak, "fr-fr+f5", "", "", ""},
	{"Thomas", GenderMale, "fr_FR", EngineEspeak, "fr-fr", "", "", ""},
	{"Bence", GenderMale, "hu_HU", EngineEspeak, "hu", "", "", ""},
	{"Reka", GenderFemale, "hu_HU", EngineEspeak, "hu+f5", "", "", ""},
	{"Giulia", GenderFemale, "it_IT", EngineEspeak, "it+f5", "", "", ""},
	{"Marco", GenderMale, "it_IT", EngineEspeak, "it", "", "", ""},
	{"Ingrid", GenderFemale, "nb_NO", EngineEspeak, "nb+f5", "", "", ""},
	{"Lars", GenderMale, "nb_NO", EngineEspeak, "nb", "", "", ""},
	{"Daan", GenderMale, "nl_NL", EngineEspeak, "nl", "", "", ""},
	{"Sanne", GenderFemale, "nl_NL", EngineEspeak, "nl+f5", "", "", ""},
	{"Jakub", GenderMale, "pl_PL", EngineEspeak, "pl", "", "", ""},
	{"Zofia", GenderFemale, "pl_PL", EngineEspeak, "pl+f5", "", "", ""},
	{"Ana", GenderFemale, "pt_BR", EngineEspeak, "pt-br+f5", "", "", ""},
	{"Pedro", GenderMale, "pt_BR", EngineEspeak, "pt-br", "", "", ""},
	{"Beatriz", GenderFemale, "pt_PT", EngineEspeak, "pt+f5", "", "", ""},
	{"Tiago", GenderMale, "pt_PT", EngineEspeak, "pt", "", "", ""},
	{"Andrei", GenderMale, "ro_RO", EngineEspeak, "ro", "", "", ""},
	{"Ioana", GenderFemale, "ro_RO", EngineEspeak, "ro+f5", "", "", ""},
	{"Ivan", GenderMale, "ru_RU", EngineEspeak, "ru", "", "", ""},
	{"Olga", GenderFemale, "ru_RU", EngineEspeak, "ru+f5", "", "", ""},
	{"Elsa", GenderFemale, "sv_SE", EngineEspeak, "sv+f5", "", "", ""},
	{"Erik", GenderMale, "sv_SE", EngineEspeak, "sv", "", "", ""},
	{"Elif", GenderFemale, "tr_TR", EngineEspeak, "tr+f5", "", "", ""},
	{"Emre", GenderMale, "tr_TR", EngineEspeak, "tr", "", "", ""},
}

// defaults holds each language's default title and body voice names, sorted by language.
var defaults = [...]struct{ language, title, body string }{
	{"cs_CZ", "Jan", "Tereza"},
	{"da_DK", "Mads", "Freja"},
	{"de_DE", "Lukas", "Anna"},
	{"el_GR", "Nikos", "Eleni"},
	{"en_GB", "Alan", "Alan"},
	{"en_US", "Richard", "Sally"},
	{"es_ES", "Pablo", "Lucia"},
	{"es_MX", "Diego", "Sofia"},
	{"fi_FI", "Mikko", "Aino"},
	{"fr_FR", "Thomas", "Julie"},
	{"hu_HU", "Bence", "Reka"},
	{"it_IT", "Marco", "Giulia"},
	{"nb_NO", "Lars", "Ingrid"},
	{"nl_NL", "Daan", "Sanne"},
	{"pl_PL", "Jakub", "Zofia"},
	{"pt_BR", "Pedro", "Ana"},
	{"pt_PT", "Tiago", "Beatriz"},
	{"ro_RO", "Andrei", "Ioana"},
	{"ru_RU", "Ivan", "Olga"},
	{"sv_SE", "Erik", "Elsa"},
	{"tr_TR", "Emre", "Elif"},
}

// Voices returns a copy of the built-in voices, sorted by language, then name.
func Voices() []Voice { return builtin.Voices() }

// Languages returns the locales the built-in voices speak, sorted.
func Languages() []string { return builtin.Languages() }

// LookupVoice finds a built-in voice of language by its name ("Sally") or its label
// ("Sally (Female)"), ignoring case and surrounding space.
func LookupVoice(language, name string) (Voice, bool) { return builtin.Lookup(language, name) }

// DefaultVoices returns language's built-in default title and body voices. ok is false if
// the language is not built in.
func DefaultVoices(language string) (title, body Voice, ok bool) { return builtin.Defaults(language) }
