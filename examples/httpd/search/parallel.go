package search

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/workgang/workgang/examples/internal/shareset"
	"github.com/workgang/workgang/workers"
)

// ErrGroup scores every shard on a goroutine of its own, started per
// request by an errgroup.Group.
type ErrGroup struct{}

// Name returns "errgroup".
func (ErrGroup) Name() string { return "errgroup" }

// Search starts one goroutine per shard and waits for them.
func (ErrGroup) Search(ctx context.Context, ix *Index, q []float32, k int) ([]Hit, error) {
	parts := make([][]Hit, ix.Shards)
	g, ctx := errgroup.WithContext(ctx)
	for s := range parts {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			parts[s] = ix.ScoreShard(s, q, k, make([]Hit, 0, k)) // each goroutine its own element
			return nil
		})
	}
	if err := g.Wait(); err != nil { // Wait's return is synchronized after every Go's
		return nil, err
	}
	return Merge(parts, k), nil
}

// Range scores the shards with ForRange on a worker set, one shard per
// chunk, the calling goroutine taking part (caller-runs). On a set that
// takes concurrent runs (shareset.New, workers.Acquire), a request that
// finds the set busy scores on its own goroutine instead of waiting.
type Range struct {
	Label string // the searcher's name
	Set   *workers.Workers
}

// Name returns the label.
func (r Range) Name() string { return r.Label }

// Search runs one ForRange over the shards.
func (r Range) Search(ctx context.Context, ix *Index, q []float32, k int) ([]Hit, error) {
	parts := make([][]Hit, ix.Shards)
	opts := []workers.RangeOption{workers.WithChunk(1)}
	r.Set.ForRange(ix.Shards, func(_, lo, hi int) {
		for s := lo; s < hi; s++ { // each chunk is claimed once: one writer per element
			parts[s] = ix.ScoreShard(s, q, k, make([]Hit, 0, k))
		}
	}, opts...)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Merge(parts, k), nil // ForRange's return is synchronized after every body's
}

// Context scores the shards with RunContext on a worker set: copy i scores
// shards i, i+copies, ... and stops early once ctx is done.
type Context struct {
	Label string
	Set   *workers.Workers
}

// Name returns the label.
func (c Context) Name() string { return c.Label }

// Search runs one RunContext over the shards.
func (c Context) Search(ctx context.Context, ix *Index, q []float32, k int) ([]Hit, error) {
	parts := make([][]Hit, ix.Shards)
	copies := ix.Shards
	err := c.Set.RunContext(ctx, copies, func(ctx context.Context, worker int) error {
		for s := worker; s < len(parts); s += copies { // copies own disjoint shards
			if err := ctx.Err(); err != nil {
				return err
			}
			parts[s] = ix.ScoreShard(s, q, k, make([]Hit, 0, k))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return Merge(parts, k), nil
}

// Try runs Inner's search on the set only when no other request is on it
// through the same Try, and serially otherwise: the user-level rule that a
// set taking concurrent runs provides by itself. Use a pointer.
type Try struct {
	Label string
	Inner Searcher
	gate  shareset.TryRun
}

// Name returns the label.
func (t *Try) Name() string { return t.Label }

// Search runs Inner.Search if the set is free, Serial's otherwise.
func (t *Try) Search(ctx context.Context, ix *Index, q []float32, k int) (hits []Hit, err error) {
	t.gate.Do(
		func() { hits, err = t.Inner.Search(ctx, ix, q, k) },
		func() { hits, err = Serial{}.Search(ctx, ix, q, k) })
	return hits, err
}
