"""Toy extensions: each is one module plus one registration line, proving an extension point."""
