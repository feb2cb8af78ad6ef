-- Argo CD health of a pinery.dev FSDPJob, from its phase.
-- Succeeded: Healthy. Failed: Degraded. Suspended: Suspended.
-- Pending, Queued, Running, Restarting (and no status yet): Progressing.
local hs = {status = "Progressing", message = "Waiting for the operator"}
if obj.status == nil or obj.status.phase == nil then
  return hs
end

local phase = obj.status.phase
if phase == "Succeeded" then
  hs.status = "Healthy"
elseif phase == "Failed" then
  hs.status = "Degraded"
elseif phase == "Suspended" then
  hs.status = "Suspended"
end

-- The condition named after the phase says why (for example the exit code of a failed node).
hs.message = phase
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == phase and c.message ~= nil and c.message ~= "" then
      hs.message = phase .. ": " .. c.message
    end
  end
end

local progress = obj.status.progress
if phase == "Running" and progress ~= nil and progress.step ~= nil then
  local step = "step " .. tostring(progress.step)
  if progress.totalSteps ~= nil then
    step = step .. "/" .. tostring(progress.totalSteps)
  end
  hs.message = hs.message .. " (" .. step .. ")"
end
return hs
