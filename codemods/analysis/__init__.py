"""What a file's code means, computed once per file and queried by every rule."""
