package web

import "net/http"

// routes registers every dashboard route. Pages that need a signed-in user
// go through authed, which redirects others to /signin and checks the CSRF
// token of every POST.
func (s *Server) routes() {
	m := s.mux
	m.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	m.Handle("GET /favicon.ico", http.RedirectHandler("/static/favicon.svg", http.StatusMovedPermanently))

	m.Handle("GET /signin", s.handle(s.signinPage))
	m.Handle("POST /signin", s.handle(s.signin))
	m.Handle("POST /signout", s.handle(s.authed(s.signout)))

	m.Handle("GET /{$}", s.handle(s.authed(s.home)))
	m.Handle("GET /projects", s.handle(s.authed(s.projectsPage)))
	m.Handle("POST /projects", s.handle(s.authed(s.createProject)))
	m.Handle("GET /projects/{pid}", s.handle(s.authed(s.projectPage)))
	m.Handle("GET /projects/{pid}/status", s.handle(s.authed(s.audioStatus)))
	m.Handle("GET /projects/{pid}/audios/new", s.handle(s.authed(s.newAudioPage)))
	m.Handle("POST /projects/{pid}/audios", s.handle(s.authed(s.createAudio)))
	m.Handle("GET /projects/{pid}/audios/import", s.handle(s.authed(s.importAudioPage)))
	m.Handle("POST /projects/{pid}/audios/import", s.handle(s.authed(s.importAudio)))
	m.Handle("GET /projects/{pid}/audios/{aid}", s.handle(s.authed(s.audioPage)))
	m.Handle("GET /projects/{pid}/audios/{aid}/edit", s.handle(s.authed(s.editAudioPage)))
	m.Handle("POST /projects/{pid}/audios/{aid}", s.handle(s.authed(s.updateAudio)))
	m.Handle("POST /projects/{pid}/audios/{aid}/resynthesize", s.handle(s.authed(s.resynthesizeAudio)))
	// The old name, a deprecated alias for one release (docs/decisions/vocabulary.md).
	m.Handle("POST /projects/{pid}/audios/{aid}/regenerate", s.handle(s.authed(s.resynthesizeAudio)))
	m.Handle("POST /projects/{pid}/audios/{aid}/publication", s.handle(s.authed(s.setPublication)))
	m.Handle("GET /projects/{pid}/audios/{aid}/delete", s.handle(s.authed(s.deleteAudioPage)))
	m.Handle("POST /projects/{pid}/audios/{aid}/delete", s.handle(s.authed(s.deleteAudio)))
	m.Handle("GET /projects/{pid}/feed", s.handle(s.authed(s.feedPage)))
	m.Handle("POST /projects/{pid}/feed", s.handle(s.authed(s.saveFeed)))
	m.Handle("POST /projects/{pid}/feed/rotate", s.handle(s.authed(s.rotateFeed)))
	m.Handle("POST /projects/{pid}/feed/off", s.handle(s.authed(s.disableFeed)))

	m.Handle("GET /projects/{pid}/access", s.handle(s.authed(s.accessPage)))
	m.Handle("POST /projects/{pid}/access", s.handle(s.authed(s.saveAccess)))
	m.Handle("POST /projects/{pid}/access/rotate", s.handle(s.authed(s.rotateEmbedSecret)))

	m.Handle("GET /projects/{pid}/speech", s.handle(s.authed(s.speechPage)))
	m.Handle("POST /projects/{pid}/speech", s.handle(s.authed(s.saveSpeech)))
	m.Handle("POST /projects/{pid}/clips", s.handle(s.authedUpload(s.saveClips)))
	m.Handle("POST /projects/{pid}/resynthesize", s.handle(s.authed(s.resynthesizeProject)))

	m.Handle("GET /projects/{pid}/sources", s.handle(s.authed(s.sourcesPage)))
	m.Handle("POST /projects/{pid}/sources", s.handle(s.authed(s.createSource)))
	m.Handle("POST /projects/{pid}/sources/{fid}/poll", s.handle(s.authed(s.pollSource)))
	m.Handle("GET /projects/{pid}/webhooks", s.handle(s.authed(s.webhooksPage)))
	m.Handle("POST /projects/{pid}/webhooks", s.handle(s.authed(s.createWebhook)))
	m.Handle("GET /projects/{pid}/webhooks/{wid}/delete", s.handle(s.authed(s.deleteWebhookPage)))
	m.Handle("POST /projects/{pid}/webhooks/{wid}/delete", s.handle(s.authed(s.deleteWebhook)))
	m.Handle("POST /projects/{pid}/webhooks/{wid}/rotate", s.handle(s.authed(s.rotateWebhook)))
	m.Handle("POST /projects/{pid}/webhooks/{wid}/enable", s.handle(s.authed(s.enableWebhook)))
	m.Handle("POST /projects/{pid}/webhooks/{wid}/test", s.handle(s.authed(s.testWebhook)))
	m.Handle("POST /projects/{pid}/webhooks/{wid}/deliveries/{did}/resend", s.handle(s.authed(s.resendDelivery)))

	m.Handle("GET /keys", s.handle(s.authed(s.keysPage)))
	m.Handle("POST /keys", s.handle(s.authed(s.createKey)))
	m.Handle("GET /keys/{kid}/revoke", s.handle(s.authed(s.revokeKeyPage)))
	m.Handle("POST /keys/{kid}/revoke", s.handle(s.authed(s.revokeKey)))

	m.Handle("GET /voices", s.handle(s.authed(s.voicesPage)))
	m.Handle("GET /voices/{lang}/{name}/preview.mp3", s.handle(s.authed(s.voicePreview)))

	m.Handle("/", s.handle(s.notFoundPage))
}
