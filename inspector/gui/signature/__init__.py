"""The signature chooser above the comparison's inputs."""
