"""The Investigation operations (specs/investigate.md §9): read tools over the store, the rules and GitHub."""
