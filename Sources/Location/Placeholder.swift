/// Placeholder until the location sources land.
enum LocationPlaceholder {}
