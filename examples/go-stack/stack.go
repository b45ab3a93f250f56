// Package stack provides a small generic LIFO stack.
package stack

import "errors"

// ErrEmpty is returned by Pop and Peek on an empty stack.
var ErrEmpty = errors.New("stack is empty")

// Stack is a last-in, first-out collection.
type Stack[T any] struct {
	items []T
}

// Push adds v to the top of the stack.
func (s *Stack[T]) Push(v T) {
	s.items = append(s.items, v)
}

// Pop removes and returns the top item.
func (s *Stack[T]) Pop() (T, error) {
	var zero T
	if len(s.items) == 0 {
		return zero, ErrEmpty
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, nil
}

// Peek returns the top item without removing it.
func (s *Stack[T]) Peek() (T, error) {
	var zero T
	if len(s.items) == 0 {
		return zero, ErrEmpty
	}
	return s.items[len(s.items)-1], nil
}

// Len returns the number of items.
func (s *Stack[T]) Len() int {
	return len(s.items)
}
