// How an owner's budget is worded on the usage page: the span it
// covers and where it comes from.

import { BudgetPeriod, BudgetSource } from "../../../gen/agents/v1/owner_pb";

// periodLabel words the span an owner's budget covers.
export function periodLabel(p: BudgetPeriod | undefined): string {
  switch (p) {
    case BudgetPeriod.DAY:
      return "per day (UTC)";
    case BudgetPeriod.MONTH:
      return "per month (UTC)";
  }
  return "in total";
}

// currentPeriodLabel names the current period of a budget.
export function currentPeriodLabel(p: BudgetPeriod | undefined): string {
  switch (p) {
    case BudgetPeriod.DAY:
      return "Today (UTC)";
    case BudgetPeriod.MONTH:
      return "This month (UTC)";
  }
  return "In total";
}

// sourceLabel says where an owner's budget comes from.
export function sourceLabel(s: BudgetSource | undefined): string {
  switch (s) {
    case BudgetSource.OWNER:
      return "set for this owner";
    case BudgetSource.DEFAULT:
      return "the server's default for every owner";
  }
  return "none: no limit";
}
