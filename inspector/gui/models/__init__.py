"""Models A and B and the linked selection: the controller that opens models into `AppState`."""
