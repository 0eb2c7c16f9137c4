package main

import "github.com/gotensor/gotensor/gotensor/codec"

func codecName(id codec.ID) string {
	if c, err := codec.ByID(id); err == nil {
		return c.Name()
	}
	return "unknown"
}
