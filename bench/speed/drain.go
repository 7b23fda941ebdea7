package main

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Words of the short articles of the drain benchmark. Combined with each
// article's number they make every title and sentence different, so that
// the sentence cache helps no more than it would with real news briefs.
var (
	briefTowns  = []string{"Ashford", "Brookvale", "Carrow", "Dunmore", "Eastleigh", "Fairhaven", "Glenrock", "Hollins", "Irvington", "Kelso"}
	briefThings = []string{"library", "bridge", "bus depot", "swimming pool", "market hall", "fire station", "clinic", "skate park", "harbour wall", "school kitchen"}
	briefVerbs  = []string{"reopened", "was approved", "was delayed", "won funding", "was sold", "was inspected", "was extended", "closed for repairs"}
	briefMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// brief returns the title and body of short article i: a title and two
// sentences.
func brief(i int) (title, body string) {
	town := briefTowns[i%len(briefTowns)]
	thing := briefThings[(i/len(briefTowns))%len(briefThings)]
	verb := briefVerbs[(i/7)%len(briefVerbs)]
	month := briefMonths[i%len(briefMonths)]
	title = fmt.Sprintf("%s %s %s", town, thing, verb)
	body = fmt.Sprintf("<p>The %s in %s %s on %d %s, after %d residents signed a letter to the council. "+
		"Officials said the work would cost about %d thousand pounds and take %d weeks.</p>",
		thing, town, verb, 1+i%28, month, 40+i, 100+(i*37)%900, 2+i%11)
	return title, body
}

// drain posts a backlog of short articles to a fresh server and measures
// how fast it is processed.
func (b *bench) drain(count int) error {
	n, err := b.fresh()
	if err != nil {
		return err
	}
	defer n.Stop()
	fmt.Printf("backlog of %d short articles (a title and two sentences, all different); load average at start %s\n", count, loadAvg())
	s := newSampler(n.Server)
	s.Start()
	start := time.Now()
	refs := make([]string, count)
	var (
		wg   sync.WaitGroup
		next atomic.Int64
		errs = make(chan error, 8)
	)
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= count {
					return
				}
				title, body := brief(i)
				refs[i] = fmt.Sprintf("brief-%d", i)
				if _, err := n.Call("POST", fmt.Sprintf("/api/v3/projects/%d/audio", n.Project),
					map[string]any{"title": title, "body": body, "external_id": refs[i]}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		s.Stop()
		return err
	}
	posted := time.Since(start)
	// The log says when each audio is published (see logWatch).
	for n.logs.count() < count {
		if failed := n.logs.failures(); failed > 0 || time.Since(start) > 30*time.Minute {
			s.Stop()
			return fmt.Errorf("%d audios failed, %d still unprocessed after %s", failed, count-n.logs.count(), time.Since(start).Round(time.Second))
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	prof := s.Stop()
	for _, ref := range refs {
		a, err := n.Call("GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s", n.Project, ref), nil)
		if err != nil {
			return err
		}
		if a["state"] != "processed" {
			return fmt.Errorf("audio %s: the log says processed, the API %v", ref, a["state"])
		}
	}
	fmt.Printf("%d articles processed in %.1f s (all posted after %.1f s): %.2f articles/s; load average at end %s\n",
		count, took.Seconds(), posted.Seconds(), float64(count)/took.Seconds(), loadAvg())
	fmt.Printf("  %s\n", prof)
	per := func(d time.Duration) float64 { return 1000 * d.Seconds() / float64(count) }
	fmt.Printf("  CPU per article %.0f ms (go %.0f ms", per(prof.total()), per(prof.server))
	for _, c := range prof.commands() {
		if d := prof.byComm[c]; d > 0 {
			fmt.Printf(", %s %.0f ms", c, per(d))
		}
	}
	if prof.exact > 0 {
		fmt.Printf(", exited processes %.0f ms", per(prof.exited))
	}
	fmt.Printf("): on %d idle cores, at most %.1f articles/s\n", runtime.NumCPU(), float64(runtime.NumCPU())*float64(count)/prof.total().Seconds())
	return nil
}
