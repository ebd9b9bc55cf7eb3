// The run's headline figures (the report's summary), written once: each is a
// line of the text and markdown summary, members of the run's JSON object
// and the HTML cards, so a new figure is one entry here that every renderer
// shows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

struct HeadlineCard {
  std::string title;  ///< "hardware queues, peak"
  std::string value;  ///< "4"
  std::string sub;    ///< "3 live at the end"; "": none
};

struct HeadlineFigure {
  std::string what;  ///< the text and markdown summary's label; "": no line
  std::string text;  ///< its value there
  /// Members of the run's JSON object (docs/report.md's schema), in order.
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  std::vector<HeadlineCard> cards;  ///< the HTML's cards, in order
};

/// The headline of `r`, in the order every renderer shows it.
std::vector<HeadlineFigure> Headline(const RunReport& r);

}  // namespace gpuq::report
