"""The Investigation operations (docs/investigate.md §9): read tools over the store, the rules and GitHub."""
