"""The bundled example pair: opened compared on its bundled inputs, once per opening."""
