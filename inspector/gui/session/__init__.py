"""File > Save session / Open session and crash recovery."""
