package stack

import (
	"errors"
	"testing"
)

func TestPushPopOrder(t *testing.T) {
	var s Stack[int]
	s.Push(1)
	s.Push(2)
	s.Push(3)
	for _, want := range []int{3, 2, 1} {
		got, err := s.Pop()
		if err != nil || got != want {
			t.Fatalf("Pop() = %d, %v; want %d, nil", got, err, want)
		}
	}
}

func TestPopEmpty(t *testing.T) {
	var s Stack[string]
	if _, err := s.Pop(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Pop() on empty stack: err = %v, want ErrEmpty", err)
	}
}

func TestPeekDoesNotRemove(t *testing.T) {
	var s Stack[string]
	s.Push("top")
	if v, _ := s.Peek(); v != "top" {
		t.Fatalf("Peek() = %q, want top", v)
	}
	if s.Len() != 1 {
		t.Fatalf("Len() = %d after Peek, want 1", s.Len())
	}
}

func TestLen(t *testing.T) {
	tests := []struct {
		name   string
		pushes int
	}{
		{"empty", 0},
		{"one", 1},
		{"many", 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Stack[int]
			for i := 0; i < tc.pushes; i++ {
				s.Push(i)
			}
			if s.Len() != tc.pushes {
				t.Errorf("Len() = %d, want %d", s.Len(), tc.pushes)
			}
		})
	}
}
