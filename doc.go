// Package narrator holds Narrator's domain types and rules: accounts, API
// keys, projects, audios and their media, voices, and the coded errors that
// every layer shares. It imports the standard library only; storage, the wire
// format and speech engines live in internal packages that convert to and
// from these types.
package narrator
