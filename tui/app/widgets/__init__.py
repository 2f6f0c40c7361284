"""The app's widgets: header, item list, detail pane, warning bar, key hints, bar chart."""
