// Package client is a Go client for Narrator's Audio Generation Service
// API v3 and its extensions (progress, transcripts, voices, pronunciation
// rules, webhooks).
//
// It uses the standard library only. Every method takes a context first
// and honours its cancellation. The API key is sent in the Authorization
// header, never in URLs, so it does not end up in access logs.
//
// Errors that the server answers are *Error values carrying the HTTP
// status and the v3 error code and message; use errors.As to read them, or
// IsNotFound and friends:
//
//	a, err := c.GetAudio(ctx, projectID, "article-17")
//	var apiErr *client.Error
//	if errors.As(err, &apiErr) && apiErr.Code == client.CodeNotFound {
//		// create it
//	}
//
// A new audio is unprocessed; WaitProcessed polls it, with exponential
// backoff, until its speech is published or its synthesis has failed:
//
//	a, err := c.CreateAudio(ctx, projectID, client.NewAudio{Title: "Hello", Body: "Hello, world."})
//	if err != nil {
//		return err
//	}
//	a, err = c.WaitProcessed(ctx, projectID, strconv.FormatInt(a.ID, 10), client.WaitOptions{})
//	if err != nil {
//		return err // errors.Is(err, client.ErrAudioFailed) if synthesis failed
//	}
//	fmt.Println(a.MediaURL("mp3"))
//
// The server publishes the contract this package follows as an OpenAPI
// 3.1 document at /api/v3/openapi.json.
package client
