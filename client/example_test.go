package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/narrator/narrator/client"
)

// Create an audio, wait until its speech is published, and print where.
func Example() {
	ctx := context.Background()
	c, err := client.New(serverURL, apiKey)
	if err != nil {
		log.Fatal(err)
	}
	a, err := c.CreateAudio(ctx, projectID, client.NewAudio{
		Title:      "Hello",
		Body:       "Hello, world.",
		ExternalID: "example-hello",
		Metadata:   map[string]string{"section": "news"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.State, a.MediaURL(client.ContentTypeMP3) == "")

	a, err = c.WaitProcessed(ctx, projectID, "example-hello", client.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.State, strings.HasSuffix(a.MediaURL(client.ContentTypeMP3), "/audio.mp3"), a.Metadata["section"])
	// Output:
	// unprocessed true
	// processed true news
}

// Tell a missing audio from other failures by its v3 error code.
func ExampleError() {
	ctx := context.Background()
	c, err := client.New(serverURL, apiKey)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.GetAudio(ctx, projectID, "no-such-article")
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code == client.CodeNotFound, apiErr.Message)
	}
	fmt.Println(client.IsNotFound(err))
	// Output:
	// 404 true Object not found
	// true
}

// Read an audio's timed transcript once it is processed.
func ExampleClient_Transcript() {
	ctx := context.Background()
	c, err := client.New(serverURL, apiKey)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.CreateAudio(ctx, projectID, client.NewAudio{Body: "One sentence. Then another.", ExternalID: "example-transcript"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitProcessed(ctx, projectID, "example-transcript", client.WaitOptions{}); err != nil {
		log.Fatal(err)
	}
	t, err := c.Transcript(ctx, projectID, "example-transcript")
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range t.Sentences {
		fmt.Println(s.Text, s.End > s.Start)
	}
	// Output:
	// One sentence. true
	// Then another. true
}

// List the default voices of a language.
func ExampleClient_ListVoices() {
	c, err := client.New(serverURL, apiKey)
	if err != nil {
		log.Fatal(err)
	}
	voices, err := c.ListVoices(context.Background(), "en_US")
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range voices {
		if len(v.DefaultFor) > 0 {
			fmt.Println(v.Label, v.DefaultFor)
		}
	}
	// Output:
	// Richard (Male) [title]
	// Sally (Female) [body]
}
